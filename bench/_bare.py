"""The baseline: a bare Celery no-op task on the same broker and app settings as toolfleet's workers."""

from __future__ import annotations

import json
import os
import time

import redis

from workers.app import create_app

app = create_app()
_redis = redis.Redis.from_url(os.environ["BENCH_RESULTS_URL"])


@app.task(name="bench.noop")
def noop(tag: str, sent: float) -> None:
    _redis.rpush("bench:done", json.dumps([tag, sent, time.time()]))
