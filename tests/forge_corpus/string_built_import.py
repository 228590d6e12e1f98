# expect: refused banned-dynamic-import
def run(action, params):
    name = "o" + "s"
    return __import__(name) and "go"
