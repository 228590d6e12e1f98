"""The `executions` table: one row per tool execution, the record of truth.

A row moves queued -> running -> one terminal state (succeeded, failed, timed_out,
cancelled). Every transition is a conditional UPDATE, so a redelivered task can take
over a `running` row but can never write a second terminal state.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from registry.db import Conn
from toolfleet.errors import ExecutionNotFound

__all__ = [
    "STATUSES",
    "TERMINAL",
    "create_execution",
    "get_execution",
    "list_executions",
    "lock_for_claim",
    "mark_running",
    "requeue_for_retry",
    "mark_sent",
    "cancel_execution",
    "finish_execution",
    "fail_unsent",
    "to_record",
    "to_seed_shape",
]

STATUSES = ("queued", "running", "succeeded", "failed", "timed_out", "cancelled")
TERMINAL = frozenset({"succeeded", "failed", "timed_out", "cancelled"})
_SEED_STATUS = {"succeeded": "success", "failed": "error", "timed_out": "timeout", "cancelled": "cancelled",
                "queued": "queued", "running": "running"}


def create_execution(
    conn: Conn,
    *,
    tool: str,
    action: str,
    params: dict[str, Any],
    queue: str,
    tool_version: int,
    target: str | None = None,
    idempotency_key: str | None = None,
    plan: tuple[str, int, int] | None = None,
) -> tuple[dict[str, Any], bool]:
    """Insert a queued row; answers (row, created). With a known idempotency key: (existing row, False)."""
    plan_id, plan_block, plan_step = plan or (None, None, None)
    row = conn.execute(
        """
        INSERT INTO executions (id, tool_name, action, params, target, queue, tool_version, idempotency_key,
                                plan_id, plan_block, plan_step)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
        ON CONFLICT (idempotency_key) DO NOTHING RETURNING *
        """,
        (uuid.uuid4(), tool, action, Jsonb(params), target, queue, tool_version, idempotency_key,
         plan_id, plan_block, plan_step),
    ).fetchone()
    if row is not None:
        return row, True
    existing = conn.execute("SELECT * FROM executions WHERE idempotency_key = %s", (idempotency_key,)).fetchone()
    assert existing is not None
    return existing, False


def get_execution(conn: Conn, execution_id: str | uuid.UUID) -> dict[str, Any]:
    try:
        key = uuid.UUID(str(execution_id))
    except ValueError:
        raise ExecutionNotFound(str(execution_id)) from None
    row = conn.execute("SELECT * FROM executions WHERE id = %s", (key,)).fetchone()
    if row is None:
        raise ExecutionNotFound(str(execution_id))
    return row


def list_executions(
    conn: Conn, *, tool: str | None = None, status: str | None = None, limit: int = 50, cursor: str | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """Newest first; `cursor` is the id of the last row of the previous page."""
    where, args = [], []
    if tool:
        where.append("tool_name = %s")
        args.append(tool)
    if status:
        where.append("status = %s")
        args.append(status)
    if cursor:
        anchor = get_execution(conn, cursor)
        where.append("(submitted_at, id) < (%s, %s)")
        args.extend([anchor["submitted_at"], anchor["id"]])
    sql = "SELECT * FROM executions"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY submitted_at DESC, id DESC LIMIT %s"
    rows = conn.execute(sql, (*args, limit + 1)).fetchall()
    next_cursor = str(rows[limit - 1]["id"]) if len(rows) > limit else None
    return rows[:limit], next_cursor


_CLAIM_COLUMNS = """e.id, e.tool_name, e.action, e.params, e.attempts, e.plan_id, e.tool_version, e.status,
    e.worker AS owner, e.worker_pid AS owner_pid, e.retries, t.module, t.version, t.time_limit_s, t.run_type,
    t.category, t.network, t.memory_mb, t.requires_env, t.idempotent"""


def lock_for_claim(conn: Conn, execution_id: str) -> dict[str, Any] | None:
    """The execution and its tool, row-locked (call inside a transaction); None when it does not exist."""
    return conn.execute(
        f"SELECT {_CLAIM_COLUMNS} FROM executions e JOIN tools t ON t.name = e.tool_name "
        "WHERE e.id = %s FOR UPDATE OF e", (execution_id,)).fetchone()


def mark_running(conn: Conn, execution_id: str, worker: str, pid: int) -> int:
    """This attempt owns the execution now; answers the attempt number."""
    row = conn.execute(
        "UPDATE executions SET status = 'running', attempts = attempts + 1, worker = %s, worker_pid = %s, "
        "started_at = clock_timestamp() WHERE id = %s RETURNING attempts", (worker, pid, execution_id)).fetchone()
    assert row is not None
    return int(row["attempts"])


def requeue_for_retry(conn: Conn, execution_id: str, attempt: int, error: dict[str, Any], delay_s: float) -> bool:
    """A retryable failure: back to queued (the error kept as the last one), counted in `retries`."""
    cur = conn.execute(
        "UPDATE executions SET status = 'queued', retries = retries + 1, error = %s, "
        "sent_at = clock_timestamp() + make_interval(secs => %s) "
        "WHERE id = %s AND status = 'running' AND attempts = %s", (Jsonb(error), delay_s, execution_id, attempt))
    return cur.rowcount == 1


def finish_execution(
    conn: Conn,
    execution_id: str,
    attempt: int,
    status: str,
    *,
    output: Any = None,
    error: dict[str, Any] | None = None,
    duration_ms: float | None = None,
) -> bool:
    """Write the terminal state of this attempt; False when another attempt or a cancel got there first."""
    assert status in TERMINAL
    cur = conn.execute(
        """
        UPDATE executions SET status = %s, output = %s, error = %s, duration_ms = %s,
               finished_at = clock_timestamp()
        WHERE id = %s AND status = 'running' AND attempts = %s
        """,
        (status, Jsonb(output) if output is not None else None, Jsonb(error) if error else None,
         duration_ms, execution_id, attempt),
    )
    return cur.rowcount == 1


def mark_sent(conn: Conn, execution_id: str | uuid.UUID) -> None:
    conn.execute("UPDATE executions SET sent_at = clock_timestamp() WHERE id = %s", (execution_id,))


def fail_unsent(conn: Conn, execution_id: str | uuid.UUID, message: str) -> None:
    """The broker never took the message: end the row instead of leaving it queued."""
    conn.execute(
        """
        UPDATE executions SET status = 'failed', finished_at = clock_timestamp(), error = %s
        WHERE id = %s AND status = 'queued'
        """,
        (Jsonb({"type": "BrokerUnavailable", "message": message, "traceback": None}), execution_id),
    )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def to_record(row: dict[str, Any]) -> dict[str, Any]:
    """The full execution record as the API shows it."""
    return {
        "id": str(row["id"]),
        "tool_name": row["tool_name"],
        "action": row["action"],
        "params": row["params"],
        "target": row["target"],
        "queue": row["queue"],
        "status": row["status"],
        "output": row["output"],
        "error": row["error"],
        "attempts": row["attempts"],
        "retries": row.get("retries", 0),
        "worker": row["worker"],
        "tool_version": row["tool_version"],
        "idempotency_key": row["idempotency_key"],
        "plan_id": str(row["plan_id"]) if row.get("plan_id") else None,
        "plan_block": row.get("plan_block"),
        "plan_step": row.get("plan_step"),
        "submitted_at": _iso(row["submitted_at"]),
        "started_at": _iso(row["started_at"]),
        "finished_at": _iso(row["finished_at"]),
        "duration_ms": row["duration_ms"],
        "log": row.get("log", ""),
        "success": row["status"] == "succeeded",
    }


def to_seed_shape(row: dict[str, Any]) -> dict[str, Any]:
    """The seed's response shape for a finished execution (status: success|error|timeout|cancelled)."""
    return {
        "execution_id": str(row["id"]),
        "tool_name": row["tool_name"],
        "action": row["action"],
        "status": _SEED_STATUS[row["status"]],
        "output": row["output"],
        "error": row["error"],
        "duration_ms": row["duration_ms"],
        "timestamp": _iso(row["finished_at"] or row["submitted_at"]),
        "success": row["status"] == "succeeded",
    }


def cancel_execution(conn: Conn, execution_id: str) -> dict[str, Any] | None:
    """End a queued or running execution as cancelled; None when it had already ended."""
    return conn.execute(
        "UPDATE executions SET status = 'cancelled', finished_at = clock_timestamp(), "
        "duration_ms = CASE WHEN started_at IS NULL THEN NULL "
        "ELSE EXTRACT(EPOCH FROM clock_timestamp() - started_at) * 1000 END, error = %s "
        "WHERE id = %s AND status IN ('queued', 'running') RETURNING *",
        (Jsonb({"type": "Cancelled", "message": "cancelled on request", "traceback": None}), execution_id)).fetchone()
