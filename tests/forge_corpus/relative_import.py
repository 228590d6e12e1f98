# expect: refused import-not-allowed
from . import secrets_module
def run(action, params):
    return "go"
