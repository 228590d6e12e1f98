"""API keys on every request: which scope each route needs, and who may run which tool.

| scope | may |
|---|---|
| read | every GET (tools, executions, plans, workers, queues, discovery, metrics) |
| execute | read + execute tools, cancel executions, submit/approve/reject/fix/cancel plans |
| admin | execute + create, change, delete and roll back tools, save plans as tools, manage keys |

A key may also be limited to some categories or tools (for execution). `/`, `/static`, `/docs`,
`/openapi.json` and `/api/health` are public. Auth is required when TOOLFLEET_AUTH=required, or
with `auto` (the default) when the API listens beyond loopback.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from registry.keys import find_key, implied

__all__ = ["PUBLIC", "required_scope", "auth_middleware", "auth_enabled"]

PUBLIC = ("/docs", "/openapi.json", "/static/", "/api/health", "/redoc", "/favicon.ico")
ADMIN_POSTS = ("/save_as_tool", "/rollback")


def auth_enabled(mode: str, host: str) -> bool:
    if mode == "required":
        return True
    if mode == "disabled":
        return False
    return host not in ("127.0.0.1", "localhost", "::1")


def required_scope(method: str, path: str) -> str | None:
    if path == "/" or path.startswith(PUBLIC):
        return None
    if method in ("GET", "HEAD", "OPTIONS"):
        return "admin" if path.startswith("/api/keys") else "read"
    if path.startswith("/api/keys") or path.startswith("/api/form/tools") and not path.endswith("/execute"):
        return "admin"
    if path.endswith(ADMIN_POSTS):
        return "admin"
    return "execute"


def _deny(status: int, detail: str) -> JSONResponse:
    code = "unauthorized" if status == 401 else "forbidden"
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": code, "detail": detail}, status_code=status, headers=headers)


async def auth_middleware(request: Request, call_next: Any) -> Any:
    request.state.api_key = None
    if not request.app.state.auth_required:
        return await call_next(request)
    scope = required_scope(request.method, request.url.path)
    if scope is None:
        return await call_next(request)
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else request.headers.get("x-api-key", "")
    if not token:
        return _deny(401, "an API key is required: send `Authorization: Bearer <key>` (create one with "
                          "`toolfleet keys create --name NAME --scopes read,execute`)")
    from fastapi.concurrency import run_in_threadpool

    def lookup() -> dict[str, Any] | None:
        with request.app.state.pool.connection() as conn:
            return find_key(conn, token)

    key = await run_in_threadpool(lookup)
    if key is None:
        return _deny(401, "this API key is unknown or revoked")
    if scope not in implied(key["scopes"]):
        return _deny(403, f"this key has scopes {', '.join(key['scopes'])}; {request.method} {request.url.path} "
                          f"needs {scope}")
    request.state.api_key = key
    return await call_next(request)
