"""Task and queue names, in one place: the API sends by these names and never imports workers' code."""

from __future__ import annotations

__all__ = ["TASK_EXECUTE", "TASK_PLAN_ADVANCE", "PLAN_QUEUE", "CATEGORIES", "queue_for", "queues_for_worker"]

TASK_EXECUTE = "toolfleet.execute"
TASK_PLAN_ADVANCE = "toolfleet.plan_advance"
#: the queue plan bookkeeping runs on
PLAN_QUEUE = "internal"

#: the categories `toolfleet up` starts a worker for; any other category is a queue of the same name
CATEGORIES = ("browser", "terminal", "memory", "feeds", "internal")


def queue_for(category: str, target: str | None = None) -> str:
    """`<category>`, or `<category>@<host>` when the caller pinned the step to a host."""
    return f"{category}@{target}" if target else category


def queues_for_worker(category: str, host: str) -> list[str]:
    return [queue_for(category), queue_for(category, host)]
