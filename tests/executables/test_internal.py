"""ask_llm against a local server speaking the OpenAI chat-completions wire format."""

from __future__ import annotations

import httpx

from tests.executables.conftest import run
from tests.executables.fakeweb import FakeWeb


def test_ask_llm_one_completion(tf: httpx.Client, web: FakeWeb) -> None:
    rec = run(tf, "ask_llm", "chat", {"prompt": "say hi", "system": "be brief"}, target="llmhost")
    assert rec["status"] == "succeeded", rec
    assert rec["output"]["content"] == "echo: say hi" and rec["output"]["model"] == "fake-model"
    assert rec["output"]["usage"]["total_tokens"] == 8
    sent = web.received("/v1/chat/completions")[-1]["json"]
    assert sent["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hi"}]


def test_ask_llm_is_unavailable_without_its_env(tf: httpx.Client) -> None:
    tool = tf.get("/api/form/tools/ask_llm").json()
    assert tool["available"] is True and tool["hosts"] == ["llmhost"]
    # the plain internal worker on testhost lacks LLM_* : targeting it is refused before queueing
    assert tool["requires_env"] == ["LLM_BASE_URL", "LLM_API_KEY"]
