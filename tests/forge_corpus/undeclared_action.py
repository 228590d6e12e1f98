# expect: refused interface
# actions: go,fly
def run(action, params):
    return {"ok": action == "go"}
