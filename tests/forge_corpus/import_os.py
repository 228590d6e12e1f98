# expect: refused import-not-allowed
import os
def run(action, params):
    return os.system("id") and "go"
