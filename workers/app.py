"""The Celery app factory. Nothing is built at import time."""

from __future__ import annotations

from celery import Celery

from toolfleet.services import broker_url
from toolfleet.settings import Settings, get_settings

__all__ = ["create_app"]


def create_app(settings: Settings | None = None) -> Celery:
    """A Celery app for the API (sending) or a worker (after `workers.tasks.register`)."""
    s = settings or get_settings()
    app = Celery("toolfleet", broker=broker_url(s), set_as_current=False)
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        result_serializer="json",
        result_backend=None,
        task_ignore_result=True,
        # a task whose worker dies is redelivered; a worker takes one message at a time
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_create_missing_queues=True,
        task_default_queue="internal",
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=s.publish_timeout_s,
        broker_transport_options={
            "visibility_timeout": s.visibility_timeout_s,
            "socket_connect_timeout": s.publish_timeout_s,
            "socket_timeout": max(s.publish_timeout_s, 10.0),
            "unacked_restore_interval": min(10, max(1, s.visibility_timeout_s // 4)),
            "unacked_restore_throttle": 1,
        },
        task_publish_retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1},
        # events let Flower show workers and tasks
        worker_send_task_events=True,
        task_send_sent_event=True,
        worker_hijack_root_logger=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
    )
    return app
