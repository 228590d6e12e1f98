# expect: failed outside the sandbox
def run(action, params):
    path = "/et" + "c/passwd"
    return open(path).read() if action == "go" else None
