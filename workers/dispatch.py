"""Submit an execution: validate, write the `queued` row, send the Celery message by task name.

Used by the API (and later by the plan runner). It imports no executable and no task code.
"""

from __future__ import annotations

import re
from typing import Any

from celery import Celery

from registry.db import Conn
from registry.executions import create_execution, fail_unsent
from registry.tools import get_tool
from registry.validation import validate_request
from registry.workers import availability, list_workers
from toolfleet.errors import InvalidParams, ServiceUnavailable, ToolUnavailable
from toolfleet.names import TASK_EXECUTE, queue_for
from toolfleet.services import redact
from toolfleet.settings import get_settings

__all__ = ["submit", "prepare", "send"]

_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


def submit(conn: Conn, app: Celery, *, tool_name: str, action: str, params: Any,
           target: str | None = None, idempotency_key: str | None = None,
           plan: tuple[str, int, int] | None = None) -> dict[str, Any]:
    """Answers the new execution row (or the one already made with this idempotency key);
    raises a ToolfleetError saying what was wrong. `conn` must be in autocommit: the row is
    committed before the message is sent, so a worker always finds it."""
    row, created = prepare(conn, tool_name=tool_name, action=action, params=params, target=target,
                           idempotency_key=idempotency_key, plan=plan)
    if created:
        send(conn, app, row)
    return row


def prepare(conn: Conn, *, tool_name: str, action: str, params: Any, target: str | None = None,
            idempotency_key: str | None = None,
            plan: tuple[str, int, int] | None = None) -> tuple[dict[str, Any], bool]:
    """Validate and insert the queued row, without sending; answers (row, created)."""
    tool = get_tool(conn, tool_name)
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
    queue = queue_for(tool.category, target)
    row, created = create_execution(conn, tool=tool.name, action=action, params=params, queue=queue,
                                    tool_version=tool.version, target=target, idempotency_key=idempotency_key,
                                    plan=plan)
    return {**row, "time_limit_s": tool.time_limit_s}, created


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
