# expect: refused import-not-allowed
import socket
def run(action, params):
    return socket.create_connection(("1.1.1.1", 53)) and "go"
