"""`ask_llm`: one chat completion against an OpenAI-compatible endpoint (LLM_BASE_URL, LLM_API_KEY)."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, Field

from executables._http import post_json
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class ChatParams(Params):
    prompt: str | None = Field(default=None, description="a single user message (or give `messages`)")
    messages: list[Message] | None = None
    system: str | None = None
    model: str | None = Field(default=None, description="default: LLM_MODEL from the worker's env")
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=200_000)
    timeout_s: float = Field(default=120, gt=0, le=600)


TOOL = ToolSpec(
    "ask_llm",
    "Ask a large language model: one chat completion against an OpenAI-compatible API",
    "internal",
    actions={"chat": ChatParams},
    requires_env=["LLM_BASE_URL", "LLM_API_KEY"],
    weight=0.5,
    time_limit_s=650,
)


def _chat(p: ChatParams) -> dict[str, Any]:
    messages = [m.model_dump() for m in p.messages or []]
    if p.prompt:
        messages.append({"role": "user", "content": p.prompt})
    if not messages:
        raise ExecutableError("give a prompt or messages")
    if p.system:
        messages.insert(0, {"role": "system", "content": p.system})
    model = p.model or os.environ.get("LLM_MODEL")
    if not model:
        raise ExecutableError("no model: pass `model` or set LLM_MODEL on the worker")
    body: dict[str, Any] = {"model": model, "messages": messages}
    if p.temperature is not None:
        body["temperature"] = p.temperature
    if p.max_tokens is not None:
        body["max_tokens"] = p.max_tokens
    url = os.environ["LLM_BASE_URL"].rstrip("/") + "/chat/completions"
    response = post_json(url, body, timeout_s=p.timeout_s, what="the LLM endpoint",
                         headers={"authorization": f"Bearer {os.environ['LLM_API_KEY']}"})
    data = response.json()
    try:
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ExecutableError(f"the LLM endpoint answered an unexpected body: {str(data)[:500]}") from None
    return {"content": content, "model": data.get("model", model), "finish_reason": choice.get("finish_reason"),
            "usage": data.get("usage")}


run = TOOL.dispatcher({"chat": _chat})
