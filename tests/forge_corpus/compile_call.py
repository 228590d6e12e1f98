# expect: refused banned-dynamic-code
def run(action, params):
    return compile("1", "f", "eval") and "go"
