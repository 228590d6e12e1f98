"""The sweeper: what the broker lost is sent again, and what a dead worker was running is recovered.

Run by internal workers every few heartbeats, one at a time across the fleet (a Postgres advisory
lock). Postgres is the record of truth; the broker is transport:
  * a `queued` execution sent more than TOOLFLEET_RESEND_AFTER_S ago whose queue is empty in the
    broker was lost (broker restart without persistence, API crash before sending): send it again,
    at most TOOLFLEET_MAX_RESENDS times, then end it `failed`;
  * a `running` execution whose worker stopped heart-beating (TOOLFLEET_WORKER_DEAD_AFTER_S) is put
    back on its queue (idempotent tools) or ended `failed` with `may_have_run: true` (the others).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery
from psycopg.types.json import Jsonb

from registry.db import Conn
from registry.executions import finish_execution
from toolfleet.services import broker_url
from toolfleet.settings import get_settings
from workers.broker import queue_depths
from workers.dispatch import send

__all__ = ["sweep"]

log = logging.getLogger("toolfleet.sweeper")
SWEEP_LOCK = 7_340_114_002


def sweep(conn: Conn, app: Celery) -> dict[str, int]:
    """One pass; answers counts of what it did (empty when another sweeper holds the lock)."""
    if not conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (SWEEP_LOCK,)).fetchone()["ok"]:  # type: ignore[index]
        return {}
    try:
        return {**_lost_messages(conn, app), **_dead_workers(conn, app)}
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (SWEEP_LOCK,))


def _lost_messages(conn: Conn, app: Celery) -> dict[str, int]:
    s = get_settings()
    rows = conn.execute(
        """
        SELECT e.id, e.tool_name, e.action, e.queue, e.resends, t.time_limit_s FROM executions e
        JOIN tools t ON t.name = e.tool_name
        WHERE e.status = 'queued' AND coalesce(e.sent_at, e.submitted_at) < now() - make_interval(secs => %s)
        ORDER BY e.submitted_at LIMIT 500
        """, (s.resend_after_s,)).fetchall()
    if not rows:
        return {"resent": 0, "gave_up": 0}
    depths = queue_depths(broker_url(), sorted({r["queue"] for r in rows}))
    resent = gave_up = 0
    for r in rows:
        if depths.get(r["queue"]):
            continue  # messages are waiting there: this one may just be behind them
        if r["resends"] >= s.max_resends:
            conn.execute(
                "UPDATE executions SET status = 'failed', finished_at = clock_timestamp(), error = %s "
                "WHERE id = %s AND status = 'queued'",
                (Jsonb({"type": "MessageLost", "traceback": None,
                        "message": f"the broker lost this execution's message {r['resends'] + 1} times; gave up"}),
                 r["id"]))
            gave_up += 1
            continue
        conn.execute("UPDATE executions SET resends = resends + 1 WHERE id = %s", (r["id"],))
        send(conn, app, {**r, "time_limit_s": r["time_limit_s"]})
        resent += 1
    if resent or gave_up:
        log.warning("sweeper: re-sent %d lost executions, gave up on %d", resent, gave_up)
    return {"resent": resent, "gave_up": gave_up}


def _dead_workers(conn: Conn, app: Celery) -> dict[str, int]:
    s = get_settings()
    rows: list[dict[str, Any]] = conn.execute(
        """
        SELECT e.id, e.tool_name, e.action, e.queue, e.attempts, e.worker, t.idempotent, t.time_limit_s
        FROM executions e JOIN tools t ON t.name = e.tool_name
        WHERE e.status = 'running' AND NOT EXISTS (
            SELECT 1 FROM workers w WHERE w.name = e.worker AND w.stopped_at IS NULL
              AND w.last_seen > now() - make_interval(secs => %s))
        LIMIT 500
        """, (s.worker_dead_after_s,)).fetchall()
    requeued = failed = 0
    for r in rows:
        if not r["idempotent"]:
            finish_execution(conn, str(r["id"]), r["attempts"], "failed", error={
                "type": "MayHaveRun", "may_have_run": True, "traceback": None,
                "message": f"the worker running this execution ({r['worker']}) died while it ran; {r['tool_name']} is "
                           "not idempotent, so it was not run again. Check its effects and submit it again if needed"})
            failed += 1
            continue
        # back on its queue; the next delivery claims it (a late redelivery of the old message finds it taken)
        moved = conn.execute("UPDATE executions SET status = 'queued', sent_at = clock_timestamp() "
                             "WHERE id = %s AND status = 'running' AND worker = %s", (r["id"], r["worker"])).rowcount
        if moved:
            send(conn, app, {**r, "time_limit_s": r["time_limit_s"]})
            requeued += 1
    if requeued or failed:
        log.warning("sweeper: recovered %d executions of dead workers, failed %d non-idempotent ones", requeued, failed)
    return {"recovered": requeued, "may_have_run": failed}
