"""The Celery task: decode the message, call the executor. Nothing else lives here."""

from __future__ import annotations

from typing import Any

import psycopg
from billiard.einfo import ExceptionInfo
from celery import Celery, Task
from celery.exceptions import TimeLimitExceeded

from toolfleet.errors import ServiceUnavailable
from toolfleet.names import TASK_EXECUTE
from workers import executor

__all__ = ["register"]


class ExecuteTask(Task):
    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: ExceptionInfo) -> None:
        # runs in the worker's main process when the hard time limit killed the pool process
        if isinstance(exc, TimeLimitExceeded) and args:
            executor.record_timeout(args[0])


def register(app: Celery) -> None:
    """Add toolfleet's tasks to a worker's app."""

    @app.task(name=TASK_EXECUTE, bind=True, base=ExecuteTask, max_retries=30)
    def execute(self: Task, execution_id: str, label: str = "") -> str | None:
        """`label` is `tool.action`, there so Flower shows what ran."""
        try:
            return executor.run_execution(execution_id, worker=self.request.hostname or "unknown")
        except (ServiceUnavailable, psycopg.OperationalError) as exc:
            # Postgres is down: try again shortly rather than losing the execution
            raise self.retry(exc=exc, countdown=2) from exc
