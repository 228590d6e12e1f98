"""Submit an execution: validate, write the `queued` row, send the Celery message by task name.

Used by the API (and later by the plan runner). It imports no executable and no task code.
"""

from __future__ import annotations

import re
from typing import Any

from celery import Celery

from registry.db import Conn
from registry.definitions import ToolDefinition
from registry.executions import create_execution, fail_unsent, mark_sent
from registry.tools import get_tool
from registry.validation import validate_request
from registry.workers import availability, list_workers
from toolfleet.errors import Backpressure, Forbidden, InvalidParams, ServiceUnavailable, ToolUnavailable
from toolfleet.names import TASK_EXECUTE, queue_for
from toolfleet.services import redact
from toolfleet.settings import get_settings

__all__ = ["submit", "prepare", "send", "allowed_for_key"]

_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


def submit(conn: Conn, app: Celery, *, tool_name: str, action: str, params: Any,
           target: str | None = None, idempotency_key: str | None = None,
           plan: tuple[str, int, int] | None = None, key: dict[str, Any] | None = None) -> dict[str, Any]:
    """Answers the new execution row (or the one already made with this idempotency key);
    raises a ToolfleetError saying what was wrong. `conn` must be in autocommit: the row is
    committed before the message is sent, so a worker always finds it."""
    row, created = prepare(conn, tool_name=tool_name, action=action, params=params, target=target,
                           idempotency_key=idempotency_key, plan=plan, key=key)
    if created:
        send(conn, app, row)
    return row


def prepare(conn: Conn, *, tool_name: str, action: str, params: Any, target: str | None = None,
            idempotency_key: str | None = None, plan: tuple[str, int, int] | None = None,
            key: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool]:
    """Validate and insert the queued row, without sending; answers (row, created)."""
    tool = get_tool(conn, tool_name)
    refusal = allowed_for_key(key, tool.name, tool.category)
    if refusal:
        raise Forbidden(refusal)
    if tool.run_type == "composite":
        raise ToolUnavailable(tool.name, [], (
            f"{tool.name!r} is a composite tool: run it inside a plan, "
            f'POST /api/plans {{"blocks": [{{"call_tool": "{tool.name}", "params": {{...}}}}]}}'))
    validate_request(tool, action, params)
    if target is not None and not _HOST.match(target):
        raise InvalidParams(tool_name, action, [{"loc": ["target"], "msg": "target must be a host name"}])
    live = list_workers(conn) if (tool.requires_env or target) else []
    if tool.requires_env:
        avail = availability(tool, live)
        if not avail.available:
            raise ToolUnavailable(tool.name, avail.missing_env)
    if target is not None:
        hosts = sorted({w["host"] for w in live if w["category"] == tool.category})
        if target not in hosts:
            raise ToolUnavailable(tool.name, [], (
                f"no live {tool.category} worker on host {target!r}; "
                f"live {tool.category} hosts: {', '.join(hosts) or 'none'}"))
    _check_limits(conn, tool)
    queue = queue_for(tool.category, target)
    row, created = create_execution(conn, tool=tool.name, action=action, params=params, queue=queue,
                                    tool_version=tool.version, target=target, idempotency_key=idempotency_key,
                                    plan=plan)
    return {**row, "time_limit_s": tool.time_limit_s}, created


def allowed_for_key(key: dict[str, Any] | None, tool: str, category: str) -> str | None:
    """None when the API key (if any) may run this tool, else why not."""
    if key is None:
        return None
    if key.get("categories") and category not in key["categories"]:
        return f"this API key may run tools of the categories {', '.join(key['categories'])}, not {category!r}"
    if key.get("tools") and tool not in key["tools"]:
        return f"this API key may run the tools {', '.join(key['tools'])}, not {tool!r}"
    return None


def _check_limits(conn: Conn, tool: ToolDefinition) -> None:
    """Backpressure: the category's queue limit and the tool's rate limit, before anything is written."""
    s = get_settings()
    limit = s.queue_limits.get(tool.category, s.queue_limit)
    waiting = conn.execute(
        "SELECT count(*) AS n FROM (SELECT 1 FROM executions e JOIN tools t ON t.name = e.tool_name "
        "WHERE e.status = 'queued' AND t.category = %s LIMIT %s) q", (tool.category, limit)).fetchone()
    if waiting and waiting["n"] >= limit:
        raise Backpressure(f"the {tool.category!r} queue already holds {limit} waiting executions (its limit); "
                           "retry later or add workers for it", retry_after=10)
    if tool.rate_limit_per_min:
        row = conn.execute(
            "SELECT count(*) AS n, EXTRACT(EPOCH FROM min(submitted_at) + interval '60 seconds' - now()) AS wait "
            "FROM executions WHERE tool_name = %s AND submitted_at > now() - interval '60 seconds'",
            (tool.name,)).fetchone()
        if row and row["n"] >= tool.rate_limit_per_min:
            wait = max(1.0, float(row["wait"] or 1))
            raise Backpressure(f"{tool.name!r} accepts {tool.rate_limit_per_min} executions per minute; "
                               f"retry in {int(wait)}s", retry_after=wait)


def send(conn: Conn, app: Celery, row: dict[str, Any]) -> None:
    """Send the message for a committed queued row; on a broker failure end the row and raise 503."""
    execution_id = str(row["id"])
    grace = get_settings().hard_limit_grace_s
    try:
        app.send_task(
            TASK_EXECUTE, args=[execution_id, f"{row['tool_name']}.{row['action']}"], queue=row["queue"],
            task_id=execution_id, soft_time_limit=row["time_limit_s"], time_limit=row["time_limit_s"] + grace,
            retry=True,
        )
    except Exception as exc:  # every transport has its own connection errors
        message = (f"broker not reachable at {redact(app.conf.broker_url)} ({exc}); the execution was not "
                   "queued. Start the broker (or set BROKER_URL) and submit again")
        fail_unsent(conn, execution_id, message)
        raise ServiceUnavailable(message) from exc
    mark_sent(conn, execution_id)
