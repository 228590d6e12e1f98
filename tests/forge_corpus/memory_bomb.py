# expect: failed memory
# memory_mb: 64
def run(action, params):
    blocks = []
    while action == "go":
        blocks.append("x" * 10_000_000)
