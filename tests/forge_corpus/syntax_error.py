# expect: refused syntax
def run(action, params) return 1
