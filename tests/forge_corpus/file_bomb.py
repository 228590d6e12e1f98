# expect: failed File too large
def run(action, params):
    with open("big.bin", "w") as fh:
        while action == "go":
            fh.write("x" * 1_000_000)
