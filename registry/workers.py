"""The `workers` table: heartbeats, and which tools can run where."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from registry.db import Conn
from registry.definitions import ToolDefinition

__all__ = ["Availability", "heartbeat", "mark_stopped", "list_workers", "availability", "worker_live",
           "LIVE_AFTER_S"]

LIVE_AFTER_S = 20.0  # default; TOOLFLEET_WORKER_DEAD_AFTER_S overrides it


def heartbeat(
    conn: Conn, *, name: str, host: str, category: str, queues: list[str], env_present: list[str], pid: int,
    concurrency: int, pids: list[int] | None = None,
) -> None:
    conn.execute(
        """
        INSERT INTO workers (name, host, category, queues, env_present, pid, concurrency, pids)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
        ON CONFLICT (name) DO UPDATE SET host = EXCLUDED.host, category = EXCLUDED.category,
            queues = EXCLUDED.queues, env_present = EXCLUDED.env_present, pid = EXCLUDED.pid, pids = EXCLUDED.pids,
            concurrency = EXCLUDED.concurrency, last_seen = now(), stopped_at = NULL,
            started_at = CASE WHEN workers.pid = EXCLUDED.pid THEN workers.started_at ELSE now() END
        """,
        (name, host, category, queues, env_present, pid, concurrency, pids or []),
    )


def mark_stopped(conn: Conn, name: str) -> None:
    conn.execute("UPDATE workers SET stopped_at = now() WHERE name = %s", (name,))


def list_workers(conn: Conn, *, include_dead: bool = False, live_after_s: float | None = None) -> list[dict[str, Any]]:
    if live_after_s is None:
        from toolfleet.settings import get_settings

        live_after_s = get_settings().worker_dead_after_s
    rows = conn.execute(
        """
        SELECT name, host, category, queues, env_present, pid, concurrency, started_at, last_seen, stopped_at,
               (stopped_at IS NULL AND last_seen > now() - make_interval(secs => %s)) AS live
        FROM workers ORDER BY category, host, name
        """,
        (live_after_s,),
    ).fetchall()
    return [r for r in rows if include_dead or r["live"]]


@dataclass
class Availability:
    available: bool
    hosts: list[str]
    missing_env: list[str]
    reason: str


def availability(tool: ToolDefinition, live: list[dict[str, Any]]) -> Availability:
    """Green when a live worker of the tool's category has every env name the tool requires."""
    in_category = [w for w in live if w["category"] == tool.category]
    if not tool.enabled:
        return Availability(False, [], [], "disabled")
    if tool.run_type == "composite":  # its steps run on their own categories' workers
        return Availability(True, [], [], "")
    ready = [w for w in in_category if set(tool.requires_env) <= set(w["env_present"])]
    hosts = sorted({w["host"] for w in ready})
    if ready:
        return Availability(True, hosts, [], "")
    if not in_category:
        missing = list(tool.requires_env)
        return Availability(False, [], missing, f"no live worker consumes queue {tool.category!r}")
    have = set().union(*(set(w["env_present"]) for w in in_category))
    missing = [e for e in tool.requires_env if e not in have]
    return Availability(False, [], missing or list(tool.requires_env),
                        f"no live {tool.category} worker has {', '.join(missing or tool.requires_env)}")


def worker_live(conn: Conn, name: str, live_after_s: float, pid: int | None = None) -> bool:
    """Is that worker heart-beating, and (given `pid`) is that pool process still one of its own?"""
    row = conn.execute(
        "SELECT pids FROM workers WHERE name = %s AND stopped_at IS NULL "
        "AND last_seen > now() - make_interval(secs => %s)", (name, live_after_s)).fetchone()
    if row is None:
        return False
    return pid is None or not row["pids"] or pid in row["pids"]
