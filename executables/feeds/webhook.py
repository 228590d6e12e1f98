"""`webhook`: POST a JSON payload to a URL (a generic outgoing webhook)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, HttpUrl

from executables._http import post_json
from registry.definitions import Params, ToolSpec


class PostParams(Params):
    url: HttpUrl
    payload: Any = Field(description="the JSON body")
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(default=20, gt=0, le=120)


TOOL = ToolSpec("webhook", "Send a JSON payload to a webhook URL (generic outgoing webhook)", "feeds",
                actions={"post": PostParams}, weight=0.5, time_limit_s=150,
                idempotent=False)


def _post(p: PostParams) -> dict[str, Any]:
    response = post_json(str(p.url), p.payload, timeout_s=p.timeout_s, headers=p.headers, what=str(p.url))
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text[:2000]
    return {"status": response.status_code, "response": body}


run = TOOL.dispatcher({"post": _post})
