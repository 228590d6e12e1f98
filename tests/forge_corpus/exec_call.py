# expect: refused banned-dynamic-code
def run(action, params):
    exec("x = 1")
    return "go"
