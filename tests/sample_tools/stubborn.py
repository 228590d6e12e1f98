"""A tool that ignores the soft time limit, so only the hard limit can stop it."""

import time

from billiard.exceptions import SoftTimeLimitExceeded

from registry.definitions import Params, ToolSpec


class HangParams(Params):
    seconds: float = 60


TOOL = ToolSpec("stubborn", "Ignores its soft time limit", "internal", actions={"hang": HangParams},
                time_limit_s=1)


def run(action: str, params: dict) -> None:
    p = TOOL.parse(action, params)
    deadline = time.monotonic() + p.seconds  # type: ignore[attr-defined]
    while time.monotonic() < deadline:
        try:
            time.sleep(0.1)
        except SoftTimeLimitExceeded:
            continue
