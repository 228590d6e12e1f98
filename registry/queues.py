"""Per-category load as Postgres sees it: queued, running, oldest waiting, live workers and slots."""

from __future__ import annotations

from typing import Any

from registry.db import Conn
from registry.workers import list_workers

__all__ = ["queue_stats"]


def queue_stats(conn: Conn) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        """
        SELECT t.category,
               count(*) FILTER (WHERE e.status = 'queued') AS queued,
               count(*) FILTER (WHERE e.status = 'running') AS running,
               EXTRACT(EPOCH FROM now() - min(e.submitted_at) FILTER (WHERE e.status = 'queued')) AS oldest_s
        FROM tools t LEFT JOIN executions e
          ON e.tool_name = t.name AND e.status IN ('queued', 'running')
        GROUP BY t.category
        """).fetchall()
    stats: dict[str, dict[str, Any]] = {r["category"]: {"queued": int(r["queued"]), "running": int(r["running"]),
                             "oldest_waiting_s": None if r["oldest_s"] is None else round(float(r["oldest_s"]), 3),
                             "workers": 0, "consumers": 0, "hosts": []} for r in rows}
    for w in list_workers(conn):
        entry = stats.setdefault(w["category"], {"queued": 0, "running": 0, "oldest_waiting_s": None, "workers": 0,
                                                 "consumers": 0, "hosts": []})
        entry["workers"] += 1
        entry["consumers"] += int(w["concurrency"])
        if w["host"] not in entry["hosts"]:
            entry["hosts"].append(w["host"])
    return stats
