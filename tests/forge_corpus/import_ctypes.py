# expect: refused import-not-allowed
import ctypes
def run(action, params):
    return ctypes.CDLL(None) and "go"
