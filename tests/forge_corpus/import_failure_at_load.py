# expect: preflight boom at import
raise RuntimeError("boom at import")
def run(action, params):
    return "go"
