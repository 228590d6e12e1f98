"""The Celery task: decode the message, call the executor. Nothing else lives here."""

from __future__ import annotations

from typing import Any

import psycopg
from billiard.einfo import ExceptionInfo
from celery import Celery, Task
from celery.exceptions import TimeLimitExceeded

from toolfleet.errors import ServiceUnavailable
from toolfleet.names import PLAN_QUEUE, TASK_EXECUTE, TASK_PLAN_ADVANCE
from workers import executor

__all__ = ["register"]


class ExecuteTask(Task):
    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: ExceptionInfo) -> None:
        # runs in the worker's main process when the hard time limit killed the pool process
        if isinstance(exc, TimeLimitExceeded) and args:
            plan_id = executor.record_timeout(args[0])
            if plan_id:
                _advance_later(self.app, plan_id)


def _advance_later(app: Celery, plan_id: str) -> None:
    app.send_task(TASK_PLAN_ADVANCE, args=[plan_id], queue=PLAN_QUEUE)


def register(app: Celery) -> None:
    """Add toolfleet's tasks to a worker's app."""

    @app.task(name=TASK_EXECUTE, bind=True, base=ExecuteTask, max_retries=200)
    def execute(self: Task, execution_id: str, label: str = "") -> str | None:
        """`label` is `tool.action`, there so Flower shows what ran."""
        try:
            outcome = executor.run_execution(execution_id, worker=self.request.hostname or "unknown")
        except (ServiceUnavailable, psycopg.Error) as exc:
            # Postgres is down or went away mid-transaction: try again shortly rather than losing the execution
            raise self.retry(exc=exc, countdown=2) from exc
        except executor.ExecutionNotVisible as exc:
            if self.request.retries >= 5:
                return None  # a message whose execution does not exist here: drop it
            raise self.retry(exc=exc, countdown=0.5) from exc
        except executor.OwnerAlive as exc:
            if self.request.retries >= 100:
                return None  # a duplicate; the live owner records the result
            raise self.retry(exc=exc, countdown=5) from exc
        if outcome is None:
            return None
        if outcome.retry_in is not None:
            raise self.retry(countdown=outcome.retry_in, max_retries=None)
        if outcome.plan_id:
            _advance_later(self.app, outcome.plan_id)
        return outcome.status

    @app.task(name=TASK_PLAN_ADVANCE, bind=True, max_retries=30)
    def plan_advance(self: Task, plan_id: str) -> str:
        """A step of the plan finished: start what can start now."""
        from workers.plans import advance

        try:
            return advance(executor.worker_connection(), self.app, plan_id)
        except (ServiceUnavailable, psycopg.OperationalError) as exc:
            raise self.retry(exc=exc, countdown=2) from exc
