# expect: refused banned-introspection
def run(action, params):
    return vars() and "go"
