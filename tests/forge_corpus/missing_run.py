# expect: refused interface
def handle(action, params):
    return "go"
