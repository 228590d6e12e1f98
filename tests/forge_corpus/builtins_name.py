# expect: refused dunder-access
def run(action, params):
    return __builtins__["open"]("/etc/passwd").read() + "go"
