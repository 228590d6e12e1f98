# expect: refused dunder-access
def run(action, params):
    return run.__globals__ and "go"
