"""Start a worker for one category: consume `<category>` and `<category>@<host>`, heartbeat into Postgres."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import psutil
from celery import signals

from registry.db import connect
from registry.workers import heartbeat, mark_stopped
from toolfleet.errors import ServiceUnavailable
from toolfleet.logs import configure_logging
from toolfleet.names import PLAN_QUEUE, queues_for_worker
from toolfleet.services import broker_url, check_broker, check_database
from toolfleet.settings import Settings, get_settings
from workers import metrics
from workers.app import create_app
from workers.broker import queue_depths
from workers.sweeper import sweep
from workers.tasks import register

__all__ = ["Heartbeat", "run_worker"]

log = logging.getLogger("toolfleet.worker")


class Heartbeat:
    """A thread in the worker's main process that upserts its row every few seconds."""

    def __init__(self, *, name: str, host: str, category: str, queues: list[str], concurrency: int,
                 interval: float) -> None:
        self.name, self.host, self.category, self.queues = name, host, category, queues
        self.concurrency, self.interval = concurrency, interval
        self._stop = threading.Event()
        self.app: Any = None  # set on internal workers: they also keep plans moving
        self._thread = threading.Thread(target=self._loop, name="toolfleet-heartbeat", daemon=True)

    def env_present(self, conn: Any) -> list[str]:
        """Which env names the tools of this category need that are set here (names only, never values)."""
        rows = conn.execute("SELECT DISTINCT unnest(requires_env) AS env FROM tools WHERE category = %s",
                            (self.category,)).fetchall()
        return sorted(r["env"] for r in rows if os.environ.get(r["env"]))

    def beat(self) -> None:
        with connect() as conn:
            heartbeat(conn, name=self.name, host=self.host, category=self.category, queues=self.queues,
                      env_present=self.env_present(conn), pid=os.getpid(), concurrency=self.concurrency,
                      pids=[os.getpid()] + [c.pid for c in psutil.Process().children()])
        if metrics.enabled():
            metrics.set_slots(self.category, self.concurrency)
            try:
                for queue, depth in queue_depths(broker_url(), self.queues).items():
                    metrics.set_queue_depth(queue, depth or 0)
            except Exception as exc:
                log.warning("could not read queue depth: %s", exc)

    def _loop(self) -> None:
        beats = 0
        while not self._stop.is_set():
            try:
                self.beat()
                if self.app is not None and beats % 3 == 0:
                    self.sweep_plans()
                    with connect() as conn:
                        sweep(conn, self.app)
            except Exception as exc:  # keep beating through a Postgres restart
                log.warning("heartbeat failed: %s", exc)
            beats += 1
            self._stop.wait(self.interval)

    def sweep_plans(self) -> None:
        """Safety net: advance executing plans whose steps all ended (e.g. an advance message was lost)."""
        from workers.plans import advance

        with connect() as conn:
            stalled = conn.execute(
                """
                SELECT p.id FROM plans p WHERE p.status = 'EXECUTING' AND p.updated_at < now() - interval '5 seconds'
                AND NOT EXISTS (SELECT 1 FROM plan_steps s JOIN executions e ON e.id = s.execution_id
                                WHERE s.plan_id = p.id AND e.status IN ('queued', 'running'))
                """).fetchall()
            for row in stalled:
                advance(conn, self.app, str(row["id"]))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        try:
            with connect() as conn:
                mark_stopped(conn, self.name)
        except Exception as exc:
            log.warning("could not mark worker stopped: %s", exc)


def _check_schema() -> None:
    with connect() as conn:
        if conn.execute("SELECT to_regclass('public.executions') AS t").fetchone()["t"] is None:  # type: ignore[index]
            raise ServiceUnavailable("the database has no toolfleet schema; run `toolfleet migrate`")


def run_worker(category: str, *, concurrency: int = 2, host: str | None = None, name: str | None = None,
               loglevel: str = "INFO", metrics_port: int | None = None, settings: Settings | None = None) -> None:
    """Run a Celery worker for `category` in this process until it is stopped."""
    s = settings or get_settings()
    host = host or s.hostname
    configure_logging(loglevel, s.log_format, host=host)
    if metrics_port:
        metrics.enable(s.state_path() / "metrics" / f"{category}-{os.getpid()}")
    check_database()
    check_broker()
    _check_schema()
    queues = queues_for_worker(category, host)
    node = name or f"{category}.{os.getpid()}@{host}"
    app = create_app(s)
    register(app)
    beat = Heartbeat(name=node, host=host, category=category, queues=queues, concurrency=concurrency,
                     interval=s.heartbeat_interval_s)
    if category == PLAN_QUEUE:
        beat.app = app

    def on_ready(**_: Any) -> None:
        beat.start()
        if metrics_port:
            metrics.serve(metrics_port)

    def on_child_exit(pid: int, **_: Any) -> None:
        metrics.process_died(pid)

    def on_shutdown(**_: Any) -> None:
        beat.stop()

    signals.worker_ready.connect(on_ready, weak=False)
    signals.worker_shutdown.connect(on_shutdown, weak=False)
    signals.worker_process_shutdown.connect(lambda pid=None, **kw: on_child_exit(pid or os.getpid()), weak=False)
    app.worker_main([
        "worker", "--queues", ",".join(queues), "--hostname", node, "--concurrency", str(concurrency),
        "--pool", "prefork", "--loglevel", loglevel, "--without-gossip", "--without-mingle",
    ])
