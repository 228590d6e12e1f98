# expect: timed_out time limit
# time_limit: 2
def run(action, params):
    while action == "go":
        pass
