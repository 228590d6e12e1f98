# expect: failed outside the sandbox
def run(action, params):
    return open("/proc/self/" + "environ").read() if action == "go" else None
