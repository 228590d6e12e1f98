# expect: refused import-not-allowed
import httpx
def run(action, params):
    return httpx.get("http://127.0.0.1:1").text + "go"
