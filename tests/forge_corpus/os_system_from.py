# expect: refused import-not-allowed
from os import system
def run(action, params):
    return system("id") and "go"
