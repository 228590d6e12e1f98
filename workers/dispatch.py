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

__all__ = ["submit"]

_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


def submit(conn: Conn, app: Celery, *, tool_name: str, action: str, params: Any,
           target: str | None = None, idempotency_key: str | None = None) -> dict[str, Any]:
    """Answers the new execution row (or the one already made with this idempotency key);
    raises a ToolfleetError saying what was wrong."""
    tool = get_tool(conn, tool_name)
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
                                    tool_version=tool.version, target=target, idempotency_key=idempotency_key)
    if not created:
        return row
    execution_id = str(row["id"])
    grace = get_settings().hard_limit_grace_s
    try:
        app.send_task(
            TASK_EXECUTE, args=[execution_id, f"{tool.name}.{action}"], queue=queue, task_id=execution_id,
            soft_time_limit=tool.time_limit_s, time_limit=tool.time_limit_s + grace, retry=True,
        )
    except Exception as exc:  # every transport has its own connection errors
        message = (f"broker not reachable at {redact(app.conf.broker_url)} ({exc}); the execution was not "
                   "queued. Start the broker (or set BROKER_URL) and submit again")
        fail_unsent(conn, execution_id, message)
        raise ServiceUnavailable(message) from exc
    return row
