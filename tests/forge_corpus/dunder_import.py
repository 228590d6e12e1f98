# expect: refused banned-dynamic-import
def run(action, params):
    return __import__("os").system("id") and "go"
