# expect: refused import-not-allowed
import importlib
def run(action, params):
    return importlib.import_module("o" + "s") and "go"
