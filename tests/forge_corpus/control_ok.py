# expect: succeeded
import json
import math
from pydantic import BaseModel


class GoParams(BaseModel):
    x: float = 2.0


PARAMS = {"go": GoParams}


def run(action, params):
    if action != "go":
        raise ValueError(f"unknown action {action!r}")
    p = GoParams(**params)
    with open("scratch.txt", "w") as fh:  # the scratch folder is the tool's to use
        fh.write(json.dumps({"x": p.x}))
    with open("scratch.txt") as fh:
        return {"sqrt": math.sqrt(p.x), "echo": json.loads(fh.read())}
