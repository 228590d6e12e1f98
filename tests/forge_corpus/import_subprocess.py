# expect: refused import-not-allowed
import subprocess
def run(action, params):
    return subprocess.check_output(["id"]).decode() + "go"
