"""`diag`: check a fleet end to end — echo params back, sleep, or fail on purpose."""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class EchoParams(Params):
    message: Any = Field(default=None, description="anything JSON; answered back unchanged")


class SleepParams(Params):
    seconds: float = Field(ge=0, le=3600, description="how long to sleep")


class FailParams(Params):
    message: str = Field(default="failed on purpose", description="the error message to raise")


TOOL = ToolSpec(
    "diag",
    "Diagnostics: echo a message back, sleep for some seconds, or fail on purpose, to test workers and queues",
    "internal",
    actions={"echo": EchoParams, "sleep": SleepParams, "fail": FailParams},
    weight=0.1,
    time_limit_s=30,
)


def _sleep(p: SleepParams) -> dict[str, float]:
    time.sleep(p.seconds)
    return {"slept": p.seconds}


def _fail(p: FailParams) -> None:
    raise ExecutableError(p.message)


run = TOOL.dispatcher({"echo": lambda p: {"message": p.message}, "sleep": _sleep, "fail": _fail})
