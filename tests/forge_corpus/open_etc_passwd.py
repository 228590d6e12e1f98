# expect: refused open-outside-scratch
def run(action, params):
    return open("/etc/passwd").read() + "go"
