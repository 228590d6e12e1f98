# expect: refused import-not-allowed
import sys
def run(action, params):
    return sys.modules["os"] and "go"
