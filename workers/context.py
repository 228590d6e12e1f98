"""What an executable may know about the execution it is running, and what it may attach to it.

The executor sets the current execution; tools call `save_artifact` (a screenshot, a file)
or `append_log` (output lines while they run). Outside a worker both are harmless no-ops.
"""

from __future__ import annotations

import time
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ExecutionContext", "current", "save_artifact", "append_log", "activate", "reset"]


@dataclass
class ExecutionContext:
    execution_id: str
    tool: str
    action: str
    worker: str
    attempt: int
    _log_buffer: list[str] = field(default_factory=list)
    _last_flush: float = 0.0


_current: ContextVar[ExecutionContext | None] = ContextVar("toolfleet_execution", default=None)


def current() -> ExecutionContext | None:
    return _current.get()


def activate(ctx: ExecutionContext | None) -> Token[ExecutionContext | None]:
    """Set the current execution; answers the token for `reset`."""
    return _current.set(ctx)


def reset(token: Token[ExecutionContext | None]) -> None:
    _current.reset(token)


def save_artifact(name: str, data: bytes, content_type: str) -> dict[str, Any]:
    """Store bytes with the current execution; answers where the API serves them."""
    from workers.executor import worker_connection

    ctx = current()
    if ctx is None:
        return {"name": name, "bytes": len(data), "url": None}
    worker_connection().execute(
        """
        INSERT INTO artifacts (execution_id, name, content_type, size, data) VALUES (%s, %s, %s, %s, %s)
        ON CONFLICT (execution_id, name) DO UPDATE SET data = EXCLUDED.data, size = EXCLUDED.size,
            content_type = EXCLUDED.content_type
        """,
        (ctx.execution_id, name, content_type, len(data), data),
    )
    return {"name": name, "bytes": len(data), "content_type": content_type,
            "url": f"/api/executions/{ctx.execution_id}/artifacts/{name}"}


def append_log(text: str, *, flush_every_s: float = 0.5, force: bool = False) -> None:
    """Append text to the execution's `log` field, batched so a chatty tool costs few writes."""
    from workers.executor import worker_connection

    ctx = current()
    if ctx is None:
        return
    if text:
        ctx._log_buffer.append(text)
    now = time.monotonic()
    if ctx._log_buffer and (force or now - ctx._last_flush >= flush_every_s):
        chunk = "".join(ctx._log_buffer)
        ctx._log_buffer.clear()
        ctx._last_flush = now
        worker_connection().execute(
            "UPDATE executions SET log = right(log || %s, 1000000) WHERE id = %s", (chunk, ctx.execution_id))
