# expect: refused banned-introspection
def run(action, params):
    return list(globals()) and "go"
