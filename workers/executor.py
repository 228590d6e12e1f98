"""The L2 executor: claim an execution, run its tool under limits, record the outcome.

Plain functions over a Postgres connection, so they can be tested without a broker;
the Celery task in `workers.tasks` only calls `run_execution`.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import logging
import os
import random
import time
import traceback
from typing import Any, NamedTuple

import psycopg
from billiard.exceptions import SoftTimeLimitExceeded
from pydantic_core import to_jsonable_python

from registry.db import Conn, connect
from registry.executions import TERMINAL, finish_execution, lock_for_claim, mark_running, requeue_for_retry
from registry.workers import worker_live
from toolfleet.errors import ExecutableError, RetryableError, ServiceUnavailable, ToolTimeout
from toolfleet.settings import get_settings
from workers import metrics
from workers.context import ExecutionContext, activate, append_log, reset

__all__ = ["ExecutionNotVisible", "OwnerAlive", "Outcome", "MAX_ATTEMPTS", "call_tool", "describe_error",
           "run_execution", "worker_connection", "record_timeout"]

log = logging.getLogger("toolfleet.executor")

#: deliveries after which an execution whose worker keeps dying is failed instead of retried
MAX_ATTEMPTS = 3

_conn: Conn | None = None
_loop: asyncio.AbstractEventLoop | None = None


def _reset_after_fork() -> None:
    global _conn, _loop
    _conn, _loop = None, None


os.register_at_fork(after_in_child=_reset_after_fork)


def worker_connection() -> Conn:
    """This process's connection, reopened when it was lost."""
    global _conn
    if _conn is None or _conn.closed or _conn.broken:
        _conn = connect()
    return _conn


def _event_loop() -> asyncio.AbstractEventLoop:
    # one loop per process, so async tools can keep state (e.g. browser sessions) between executions
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    return _loop


def call_tool(module_name: str, action: str, params: dict[str, Any]) -> Any:
    """Import the executable and call `run(action, params)`, awaiting it when it is async."""
    module = importlib.import_module(module_name)
    run = getattr(module, "run", None)
    if not callable(run):
        raise TypeError(f"{module_name} has no run(action, params) function")
    result = run(action, params)
    if inspect.isawaitable(result):
        result = _event_loop().run_until_complete(result)
    return result


def describe_error(exc: BaseException) -> dict[str, Any]:
    details = getattr(exc, "details", None)
    if isinstance(details, dict):  # a sandboxed tool: its own traceback and the repair context
        return {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__, **details,
                "traceback": details.get("traceback") or "".join(traceback.format_exception(exc))}
    return {
        "type": type(exc).__name__,
        "message": str(exc) or type(exc).__name__,
        "traceback": "".join(traceback.format_exception(exc)),
    }


class ExecutionNotVisible(RuntimeError):
    """The message arrived before its row is visible."""


class OwnerAlive(RuntimeError):
    """Another live process runs this execution (a duplicate message): try again later."""


class Outcome(NamedTuple):
    status: str
    plan_id: str | None
    retry_in: float | None = None


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _claim(conn: Conn, execution_id: str, worker: str) -> tuple[dict[str, Any] | None, int, Outcome | None]:
    """(claim row, attempt, None) when this process owns the execution now, else (None, 0, outcome-or-None)."""
    live_after = get_settings().worker_dead_after_s
    with conn.transaction():
        row = lock_for_claim(conn, execution_id)
        if row is None:
            # not committed yet (or from another database): the task retries shortly, then gives up
            raise ExecutionNotVisible(f"execution {execution_id} is not in the database")
        if row["status"] in TERMINAL:
            log.info("execution %s already ended (%s); dropping the message", execution_id, row["status"])
            return None, 0, None
        if row["status"] == "running":
            same_node = row["owner"] == worker
            if same_node and row["owner_pid"] == os.getpid():
                owner_alive = False  # this process owned it and is here again: its earlier attempt is over
            elif same_node:
                owner_alive = _pid_alive(row["owner_pid"])
            else:
                owner_alive = worker_live(conn, row["owner"], live_after, row["owner_pid"])
            if owner_alive:
                raise OwnerAlive(f"execution {execution_id} runs on {row['owner']} (pid {row['owner_pid']})")
            if not row["idempotent"]:
                # the previous attempt may have done its side effects: do not run it a second time
                finish_execution(conn, execution_id, row["attempts"], "failed", error={
                    "type": "MayHaveRun", "may_have_run": True, "traceback": None,
                    "message": f"the worker running this execution ({row['owner']}) died while it ran; "
                               f"{row['tool_name']} is not idempotent, so it was not run again. Check its effects "
                               "and submit it again if needed"})
                return None, 0, Outcome("failed", _plan(row))
        attempt = mark_running(conn, execution_id, worker, os.getpid())
    deaths = attempt - 1 - int(row["retries"])  # deliveries that are neither the first nor a planned retry
    if deaths >= MAX_ATTEMPTS:
        finish_execution(conn, execution_id, attempt, "failed", error={
            "type": "WorkerLost",
            "message": f"the worker running this execution died {deaths} times "
                       "(killed, crashed or out of memory); not retrying",
            "traceback": None,
        })
        return None, 0, Outcome("failed", _plan(row))
    return row, attempt, None


def _finish(execution_id: str, attempt: int, status: str, **fields: Any) -> bool:
    """Write the terminal state, riding out a Postgres restart (the broker message is acked only after)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return finish_execution(worker_connection(), execution_id, attempt, status, **fields)
        except (psycopg.OperationalError, ServiceUnavailable) as exc:
            if time.monotonic() > deadline:
                raise
            log.warning("Postgres unavailable while recording %s (%s); retrying", execution_id, exc)
            time.sleep(1.0)


def run_execution(execution_id: str, worker: str, conn: Conn | None = None) -> Outcome | None:
    """Run one execution to its terminal state; answers that state (and its plan), or None when it was over."""
    conn = conn or worker_connection()
    claim, attempt, outcome = _claim(conn, execution_id, worker)
    if claim is None:
        return outcome
    ctx = ExecutionContext(execution_id=str(execution_id), tool=claim["tool_name"], action=claim["action"],
                           worker=worker, attempt=attempt)
    token = activate(ctx)
    metrics.busy(claim["category"], +1)
    started = time.monotonic()
    output: Any = None
    error: dict[str, Any] | None = None
    status = "failed"
    retry_in: float | None = None
    try:
        if claim["run_type"] == "sandboxed":
            from workers.forge_runtime import execute_runtime_tool

            value = execute_runtime_tool(conn, claim, float(claim["time_limit_s"]))
        else:
            value = call_tool(claim["module"], claim["action"], claim["params"])
        output = to_jsonable_python(value, fallback=repr)
        size = len(json.dumps(output, default=str))
        limit = get_settings().max_output_bytes
        if size > limit:
            output = None
            raise ExecutableError(f"the output is {size} bytes, over the limit of {limit} "
                                  "(TOOLFLEET_MAX_OUTPUT_BYTES); return less, or write it to a file")
        status = "succeeded"
    except SoftTimeLimitExceeded:
        status = "timed_out"
        error = {"type": "TimeLimitExceeded",
                 "message": f"{claim['tool_name']}.{claim['action']} ran past its time limit of "
                            f"{claim['time_limit_s']:g}s and was stopped",
                 "traceback": None}
    except ToolTimeout as exc:
        status = "timed_out"
        error = describe_error(exc)
    except RetryableError as exc:
        status = "failed"
        error = describe_error(exc)
        if claim["retries"] < get_settings().max_retries:
            # exponential backoff with jitter, from the delay the tool asked for
            retry_in = min(300.0, exc.delay * 2 ** claim["retries"]) * random.uniform(0.5, 1.5)
    except (Exception, SystemExit) as exc:
        status = "failed"
        error = describe_error(exc)
    finally:
        duration_ms = (time.monotonic() - started) * 1000.0
        try:
            append_log("", force=True)
        except Exception as exc:  # the log is best effort; the terminal state is not
            log.warning("could not flush the execution log: %s", exc)
        if error:
            log.warning("execution %s after %.1f ms: %s: %s", status, duration_ms, error["type"], error["message"])
        else:
            log.info("execution %s after %.1f ms", status, duration_ms)
        reset(token)
        metrics.busy(claim["category"], -1)
    if retry_in is not None and error is not None:
        if requeue_for_retry(worker_connection(), execution_id, attempt, {**error, "retry_in_s": round(retry_in, 2)},
                             retry_in):
            return Outcome("queued", None, retry_in)
    metrics.observe_execution(claim["tool_name"], claim["category"], status, duration_ms)
    written = _finish(execution_id, attempt, status, output=output, error=error, duration_ms=duration_ms)
    if not written:
        log.warning("execution %s attempt %s finished but a newer attempt or a cancel owns it", execution_id, attempt)
    return Outcome(status, _plan(claim))


def _plan(claim: dict[str, Any]) -> str | None:
    return str(claim["plan_id"]) if claim.get("plan_id") else None


def record_timeout(execution_id: str) -> str | None:
    """The hard time limit killed the process running the tool: end the row as timed_out; answers its plan."""
    conn = worker_connection()
    row = conn.execute(
        """
        UPDATE executions e SET status = 'timed_out', finished_at = clock_timestamp(),
               duration_ms = EXTRACT(EPOCH FROM clock_timestamp() - e.started_at) * 1000,
               error = jsonb_build_object(
                   'type', 'TimeLimitExceeded', 'traceback', NULL,
                   'message', e.tool_name || '.' || e.action || ' ignored its time limit of '
                              || t.time_limit_s || 's and its process was killed')
        FROM tools t
        WHERE e.id = %s AND e.status = 'running' AND t.name = e.tool_name
        RETURNING e.plan_id
        """,
        (execution_id,),
    ).fetchone()
    return str(row["plan_id"]) if row and row["plan_id"] else None
