"""`notify`: post a message to the Slack-compatible incoming webhook in SLACK_WEBHOOK_URL."""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field

from executables._http import post_json
from registry.definitions import Params, ToolSpec


class SlackParams(Params):
    text: str = Field(min_length=1, max_length=40_000)
    username: str | None = None
    channel: str | None = None
    blocks: list[dict[str, Any]] | None = Field(default=None, description="Slack Block Kit blocks")


TOOL = ToolSpec(
    "notify",
    "Send a notification message to Slack (or any Slack-compatible incoming webhook)",
    "feeds",
    actions={"slack": SlackParams},
    requires_env=["SLACK_WEBHOOK_URL"],
    weight=0.6,
    time_limit_s=30,
    idempotent=False,
)


def _slack(p: SlackParams) -> dict[str, Any]:
    payload = p.model_dump(exclude_none=True)
    response = post_json(os.environ["SLACK_WEBHOOK_URL"], payload, timeout_s=20, what="the Slack webhook")
    return {"sent": True, "status": response.status_code, "response": response.text[:200]}


run = TOOL.dispatcher({"slack": _slack})
