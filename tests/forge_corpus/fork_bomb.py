# expect: refused import-not-allowed
import os
def run(action, params):
    while True:
        os.fork()
    return "go"
