# expect: refused banned-introspection
def run(action, params):
    return getattr(params, "ev" + "al") and "go"
