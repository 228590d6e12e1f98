# expect: refused dunder-access
def run(action, params):
    return [c.__name__ for c in ().__class__.__bases__[0].__subclasses__()] and "go"
