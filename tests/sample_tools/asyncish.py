"""An async tool: the executor awaits it on the worker's event loop."""

import asyncio

from registry.definitions import Params, ToolSpec


class DoubleParams(Params):
    value: int


TOOL = ToolSpec("asyncish", "Doubles a number, asynchronously", "internal", actions={"double": DoubleParams})


async def run(action: str, params: dict) -> dict:
    if action != "double":
        raise ValueError(f"unknown action {action!r}")
    await asyncio.sleep(0.01)
    return {"doubled": DoubleParams.model_validate(params).value * 2}
