"""`/api/queues`: the autoscaling signal for users without KEDA."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool

from api.deps import CeleryDep, DbDep
from registry.queues import queue_stats
from workers.broker import queue_depths

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["queues"])


@router.get("/queues", summary="Per category: broker depth, queued and running executions, live workers, oldest wait")
async def get_queues(conn: DbDep, celery: CeleryDep) -> dict[str, Any]:
    stats = await run_in_threadpool(queue_stats, conn)
    broker_error = None
    try:
        depths = await run_in_threadpool(queue_depths, celery.conf.broker_url, sorted(stats))
    except Exception as exc:  # report what Postgres knows even when the broker is down
        depths, broker_error = {}, f"broker not reachable: {exc}"
    return {
        "queues": [{"category": c, "queue": c, "depth": depths.get(c), **s} for c, s in sorted(stats.items())],
        "broker_error": broker_error,
        "note": "depth counts messages waiting in the broker; executions already prefetched or running are in "
                "`running`, not in `depth`",
    }
