# expect: refused import-not-allowed
import pickle
def run(action, params):
    return pickle.loads(params["blob"]) and "go"
