# expect: failed memory
# memory_mb: 64
def run(action, params):
    while action == "go":
        print("spam " * 1000)
