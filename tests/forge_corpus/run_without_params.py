# expect: refused interface
def run(action):
    return "go"
