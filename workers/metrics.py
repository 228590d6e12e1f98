"""Prometheus metrics from workers: executions by tool and status, durations per tool and category,
busy pool processes, and the depth of the worker's queues.

Celery runs tools in forked pool processes, so metrics use prometheus_client's multiprocess
mode: `enable()` must run in the worker's main process before anything imports
prometheus_client; `serve(port)` exposes the sum over all processes at `/metrics`.
"""

from __future__ import annotations

import os
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["enable", "serve", "observe_execution", "busy", "set_slots", "set_queue_depth", "enabled", "process_died"]

_ENV = "PROMETHEUS_MULTIPROC_DIR"


def enable(folder: Path) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    os.environ[_ENV] = str(folder)


def enabled() -> bool:
    return bool(os.environ.get(_ENV))


def serve(port: int, host: str = "0.0.0.0") -> None:
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    start_http_server(port, addr=host, registry=registry)


@lru_cache(maxsize=1)
def _metrics() -> dict[str, Any]:
    from prometheus_client import Counter, Gauge, Histogram

    return {
        "executions": Counter("toolfleet_executions_total", "Executions finished on this worker",
                              ["tool", "category", "status"]),
        "duration": Histogram("toolfleet_execution_duration_seconds", "Execution duration", ["tool", "category"],
                              buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800)),
        "busy": Gauge("toolfleet_worker_busy_processes", "Pool processes running a tool now", ["category"],
                      multiprocess_mode="livesum"),
        "slots": Gauge("toolfleet_worker_slots", "Pool processes of this worker", ["category"],
                       multiprocess_mode="liveall"),
        "depth": Gauge("toolfleet_queue_depth", "Messages waiting in the broker queue", ["queue"],
                       multiprocess_mode="mostrecent"),
    }


def observe_execution(tool: str, category: str, status: str, duration_ms: float) -> None:
    if enabled():
        m = _metrics()
        m["executions"].labels(tool, category, status).inc()
        m["duration"].labels(tool, category).observe(duration_ms / 1000.0)


def busy(category: str, delta: int) -> None:
    if enabled():
        _metrics()["busy"].labels(category).inc(delta)


def set_slots(category: str, slots: int) -> None:
    if enabled():
        _metrics()["slots"].labels(category).set(slots)


def set_queue_depth(queue: str, depth: int) -> None:
    if enabled():
        _metrics()["depth"].labels(queue).set(depth)


def process_died(pid: int) -> None:
    if enabled():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
