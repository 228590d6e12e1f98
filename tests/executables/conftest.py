from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import ApiProc
from tests.executables.fakeweb import FakeWeb


@pytest.fixture(scope="session")
def web() -> Iterator[FakeWeb]:
    server = FakeWeb().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tool_env(web: FakeWeb) -> dict[str, str]:
    """Env for the tools' workers: every third-party service points at the local fake."""
    return {
        "SLACK_WEBHOOK_URL": f"{web.url}/slack",
        "GITHUB_TOKEN": "gh-test-token",
        "GITHUB_API_URL": f"{web.url}/gh",
        "LLM_BASE_URL": f"{web.url}/v1",
        "LLM_API_KEY": "test-llm-key",
        "LLM_MODEL": "fake-model",
        "SEARXNG_URL": web.url,
    }


@pytest.fixture(scope="session")
def category_workers(start_worker, tool_env: dict[str, str]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {
        "terminal": start_worker("terminal", host="termhost", concurrency=2),
        "memory": start_worker("memory", host="memhost", concurrency=1),
        "feeds": start_worker("feeds", host="feedhost", concurrency=2, env=tool_env),
        "browser": start_worker("browser", host="browserhost", concurrency=1, env=tool_env),
        "internal": start_worker("internal", host="llmhost", concurrency=1, env=tool_env),
    }


@pytest.fixture()
def tf(api: ApiProc, category_workers: dict[str, object]) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


def run(client: httpx.Client, tool: str, action: str, params: dict | None = None, wait: float = 60,
        **extra: object) -> dict:
    """Execute and answer the full record (after the seed-shaped wait)."""
    r = client.post(f"/api/form/tools/{tool}/execute", params={"wait": wait},
                    json={"action": action, "params": params or {}, **extra})
    assert r.status_code in (200, 202), r.text
    record = client.get(f"/api/executions/{r.json()['execution_id']}").json()
    assert record["status"] not in ("queued", "running"), f"{tool}.{action} did not finish in {wait}s: {record}"
    return record
