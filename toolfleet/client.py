"""The Python client an agent loop imports: `from toolfleet import Client` (or `AsyncClient`).

    client = Client("http://127.0.0.1:8000")
    result = client.execute("terminal", "run", {"command": ["echo", "hi"]}, wait=30)
    result.output["stdout"]          # 'hi\\n'
    client.discover("take a screenshot of a web page")[0].name

Every API error becomes an `APIError` carrying the status and the API's message.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from toolfleet.errors import ToolfleetError

__all__ = ["APIError", "AsyncClient", "Client", "Execution", "ToolMatch", "TERMINAL"]

TERMINAL = frozenset({"succeeded", "failed", "timed_out", "cancelled"})
DEFAULT_URL = "http://127.0.0.1:8000"


class APIError(ToolfleetError):
    """The API answered an error: `status`, `code` (e.g. `unknown_action`), `detail` and the whole `body`."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body if isinstance(body, dict) else {"detail": str(body)}
        self.code = str(self.body.get("error", "http_error"))
        self.detail = str(self.body.get("detail", body))
        super().__init__(f"HTTP {status} {self.code}: {self.detail}")


class Execution(BaseModel):
    """One execution record."""

    model_config = ConfigDict(extra="allow")

    id: str
    tool_name: str
    action: str
    status: str
    params: dict[str, Any] = {}
    output: Any = None
    error: dict[str, Any] | None = None
    duration_ms: float | None = None
    attempts: int = 0
    worker: str | None = None
    queue: str | None = None
    target: str | None = None
    submitted_at: str | None = None
    finished_at: str | None = None
    log: str = ""

    @property
    def done(self) -> bool:
        return self.status in TERMINAL

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"


class ToolMatch(BaseModel):
    """A discovery result: the tool and how its score was made."""

    model_config = ConfigDict(extra="allow")

    name: str
    category: str
    description: str
    actions: list[str]
    score: float
    parts: dict[str, Any]
    available: bool = True


def _raise_for(response: httpx.Response) -> Any:
    try:
        body = response.json()
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        raise APIError(response.status_code, body)
    return body


def _execute_body(action: str, params: dict[str, Any] | None, target: str | None,
                  idempotency_key: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"action": action, "params": params or {}}
    if target:
        body["target"] = target
    if idempotency_key:
        body["idempotency_key"] = idempotency_key
    return body


def _wait_timeout(wait: float | None, base: httpx.Timeout) -> httpx.Timeout:
    """Give the HTTP read the server-side wait on top of the usual timeout."""
    if not wait:
        return base
    return httpx.Timeout(base.connect, read=(base.read or 0) + wait, write=base.write, pool=base.pool)


def _clean(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


class Client:
    """Synchronous client. Use as a context manager, or call `close()`."""

    def __init__(self, base_url: str = DEFAULT_URL, *, timeout: float = 60.0, api_key: str | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=base_url, timeout=timeout, headers=headers, transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _get(self, path: str, **params: Any) -> Any:
        return _raise_for(self._http.get(path, params=_clean(params)))

    # executions
    def submit(self, tool: str, action: str, params: dict[str, Any] | None = None, *, target: str | None = None,
               idempotency_key: str | None = None) -> str:
        """Queue an execution; answers its id at once."""
        body = _raise_for(self._http.post(f"/api/form/tools/{tool}/execute",
                                          json=_execute_body(action, params, target, idempotency_key)))
        return str(body["execution_id"])

    def execute(self, tool: str, action: str, params: dict[str, Any] | None = None, *, target: str | None = None,
                wait: float | None = None, idempotency_key: str | None = None) -> Execution:
        """Queue an execution; with `wait` seconds, answer it finished when it ends in time."""
        body = _raise_for(self._http.post(
            f"/api/form/tools/{tool}/execute", params=_clean({"wait": wait}),
            json=_execute_body(action, params, target, idempotency_key),
            timeout=_wait_timeout(wait, self._http.timeout)))
        return self.execution(body["execution_id"])

    def execution(self, execution_id: str) -> Execution:
        return Execution(**self._get(f"/api/executions/{execution_id}"))

    def wait(self, execution_id: str, timeout: float = 60.0, poll: float = 0.2) -> Execution:
        """Poll until the execution ends (or `timeout` passes: answers it as it is then)."""
        deadline = time.monotonic() + timeout
        while True:
            record = self.execution(execution_id)
            if record.done or time.monotonic() >= deadline:
                return record
            time.sleep(poll)

    def executions(self, *, tool: str | None = None, status: str | None = None, limit: int = 50,
                   cursor: str | None = None) -> tuple[list[Execution], str | None]:
        body = self._get("/api/executions", tool=tool, status=status, limit=limit, cursor=cursor)
        return [Execution(**e) for e in body["executions"]], body["next_cursor"]

    def artifact(self, execution_id: str, name: str) -> bytes:
        response = self._http.get(f"/api/executions/{execution_id}/artifacts/{name}")
        if response.status_code >= 400:
            _raise_for(response)
        return response.content

    # discovery
    def discover(self, q: str, *, k: int = 5, category: str | None = None,
                 available_only: bool = False) -> list[ToolMatch]:
        body = self._get("/api/form/discover", q=q, k=k, category=category, available_only=available_only)
        return [ToolMatch(**r) for r in body["results"]]

    def context(self, level: int = 1, q: str | None = None, k: int = 10) -> str:
        return str(self._get("/api/form/context", level=level, q=q, k=k)["text"])

    # registry
    def tools(self, category: str | None = None) -> list[dict[str, Any]]:
        return list(self._get("/api/form/tools", category=category)["tools"])

    def tool(self, name: str) -> dict[str, Any]:
        return dict(self._get(f"/api/form/tools/{name}"))

    def create_tool(self, **definition: Any) -> dict[str, Any]:
        return dict(_raise_for(self._http.post("/api/form/tools", json=definition)))

    def update_tool(self, name: str, **changes: Any) -> dict[str, Any]:
        return dict(_raise_for(self._http.put(f"/api/form/tools/{name}", json=changes)))

    def delete_tool(self, name: str) -> None:
        response = self._http.delete(f"/api/form/tools/{name}")
        if response.status_code >= 400:
            _raise_for(response)

    def categories(self) -> list[dict[str, Any]]:
        return list(self._get("/api/form/categories")["categories"])

    def workers(self) -> list[dict[str, Any]]:
        return list(self._get("/api/workers")["workers"])

    # plans
    def submit_plan(self, blocks: list[Any], *, goal: str = "", review: str = "none") -> dict[str, Any]:
        """Submit a plan; answers it (status REVIEW or EXECUTING). Refused plans raise APIError (422)."""
        return dict(_raise_for(self._http.post("/api/plans", json={"goal": goal, "blocks": blocks,
                                                                   "review": review})))

    def plan(self, plan_id: str) -> dict[str, Any]:
        return dict(self._get(f"/api/plans/{plan_id}"))

    def plans(self, status: str | None = None) -> list[dict[str, Any]]:
        return list(self._get("/api/plans", status=status)["plans"])

    def approve(self, plan_id: str) -> dict[str, Any]:
        return dict(_raise_for(self._http.post(f"/api/plans/{plan_id}/approve")))

    def reject(self, plan_id: str, feedback: str = "") -> dict[str, Any]:
        return dict(_raise_for(self._http.post(f"/api/plans/{plan_id}/reject", json={"feedback": feedback})))

    def fix(self, plan_id: str, from_block: int, blocks: list[Any], feedback: str = "") -> dict[str, Any]:
        return dict(_raise_for(self._http.post(f"/api/plans/{plan_id}/fix", json={
            "from_block": from_block, "blocks": blocks, "feedback": feedback})))

    def cancel_plan(self, plan_id: str) -> dict[str, Any]:
        return dict(_raise_for(self._http.post(f"/api/plans/{plan_id}/cancel")))

    def save_as_tool(self, plan_id: str, name: str, parameters: list[str] | dict[str, Any] | None = None,
                     description: str = "") -> dict[str, Any]:
        return dict(_raise_for(self._http.post(f"/api/plans/{plan_id}/save_as_tool", json={
            "name": name, "parameters": parameters or [], "description": description})))

    def wait_plan(self, plan_id: str, *, until: tuple[str, ...] = ("REVIEW", "VERIFYING", "FIXING", "DONE",
                                                                   "FAILED", "CANCELLED"),
                  timeout: float = 120.0, poll: float = 0.2) -> dict[str, Any]:
        """Poll until the plan reaches one of `until` (by default: it needs you, or it ended)."""
        deadline = time.monotonic() + timeout
        while True:
            plan = self.plan(plan_id)
            if plan["status"] in until or time.monotonic() >= deadline:
                return plan
            time.sleep(poll)

    def cancel(self, execution_id: str) -> Execution:
        return Execution(**_raise_for(self._http.post(f"/api/executions/{execution_id}/cancel")))


class AsyncClient:
    """The same calls for asyncio code."""

    def __init__(self, base_url: str = DEFAULT_URL, *, timeout: float = 60.0, api_key: str | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(base_url=base_url, timeout=timeout, headers=headers, transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _get(self, path: str, **params: Any) -> Any:
        return _raise_for(await self._http.get(path, params=_clean(params)))

    async def submit(self, tool: str, action: str, params: dict[str, Any] | None = None, *,
                     target: str | None = None, idempotency_key: str | None = None) -> str:
        body = _raise_for(await self._http.post(f"/api/form/tools/{tool}/execute",
                                                json=_execute_body(action, params, target, idempotency_key)))
        return str(body["execution_id"])

    async def execute(self, tool: str, action: str, params: dict[str, Any] | None = None, *,
                      target: str | None = None, wait: float | None = None,
                      idempotency_key: str | None = None) -> Execution:
        body = _raise_for(await self._http.post(
            f"/api/form/tools/{tool}/execute", params=_clean({"wait": wait}),
            json=_execute_body(action, params, target, idempotency_key),
            timeout=_wait_timeout(wait, self._http.timeout)))
        return await self.execution(body["execution_id"])

    async def execution(self, execution_id: str) -> Execution:
        return Execution(**await self._get(f"/api/executions/{execution_id}"))

    async def wait(self, execution_id: str, timeout: float = 60.0, poll: float = 0.2) -> Execution:
        deadline = time.monotonic() + timeout
        while True:
            record = await self.execution(execution_id)
            if record.done or time.monotonic() >= deadline:
                return record
            await asyncio.sleep(poll)

    async def executions(self, *, tool: str | None = None, status: str | None = None, limit: int = 50,
                         cursor: str | None = None) -> tuple[list[Execution], str | None]:
        body = await self._get("/api/executions", tool=tool, status=status, limit=limit, cursor=cursor)
        return [Execution(**e) for e in body["executions"]], body["next_cursor"]

    async def discover(self, q: str, *, k: int = 5, category: str | None = None,
                       available_only: bool = False) -> list[ToolMatch]:
        body = await self._get("/api/form/discover", q=q, k=k, category=category, available_only=available_only)
        return [ToolMatch(**r) for r in body["results"]]

    async def tools(self, category: str | None = None) -> list[dict[str, Any]]:
        return list((await self._get("/api/form/tools", category=category))["tools"])

    async def workers(self) -> list[dict[str, Any]]:
        return list((await self._get("/api/workers"))["workers"])

    async def submit_plan(self, blocks: list[Any], *, goal: str = "", review: str = "none") -> dict[str, Any]:
        return dict(_raise_for(await self._http.post("/api/plans", json={"goal": goal, "blocks": blocks,
                                                                         "review": review})))

    async def plan(self, plan_id: str) -> dict[str, Any]:
        return dict(await self._get(f"/api/plans/{plan_id}"))

    async def approve(self, plan_id: str) -> dict[str, Any]:
        return dict(_raise_for(await self._http.post(f"/api/plans/{plan_id}/approve")))
