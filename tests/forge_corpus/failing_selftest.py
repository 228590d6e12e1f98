# expect: preflight selftest says no
# actions: go,selftest
def run(action, params):
    if action == "selftest":
        raise ValueError("selftest says no")
    return "go"
