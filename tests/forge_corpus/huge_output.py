# expect: failed bytes of output
def run(action, params):
    return "x" * 30_000_000 if action == "go" else None
