# expect: failed RecursionError
def run(action, params):
    def dive(n):
        return dive(n + 1)
    return dive(0) if action == "go" else None
