"""A tool that needs an env variable; it reports only whether it is set."""

import os

from registry.definitions import Params, ToolSpec


class CheckParams(Params):
    pass


TOOL = ToolSpec("secretive", "Needs TF_TEST_TOKEN on its worker", "internal", actions={"check": CheckParams},
                requires_env=["TF_TEST_TOKEN"], time_limit_s=5)


def run(action: str, params: dict) -> dict:
    return {"token_set": bool(os.environ.get("TF_TEST_TOKEN")), "length": len(os.environ.get("TF_TEST_TOKEN", ""))}
