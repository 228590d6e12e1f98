# expect: refused banned-dynamic-code
def run(action, params):
    return eval("1 + 1") if action == "go" else None
