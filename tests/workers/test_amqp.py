"""The same path over RabbitMQ (amqp://) instead of Redis."""

from __future__ import annotations

import os
import uuid

import httpx
import pytest
from kombu import Connection


@pytest.fixture(scope="module")
def amqp_url() -> str:
    url = os.environ.get("TOOLFLEET_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")
    with Connection(url, connect_timeout=3) as conn:
        conn.ensure_connection(max_retries=1)  # fail, not skip, when RabbitMQ is missing
    return url


def test_execute_over_rabbitmq(start_worker, start_api, amqp_url: str) -> None:  # type: ignore[no-untyped-def]
    host = f"amqp{uuid.uuid4().hex[:6]}"  # its own queue internal@<host>, so nothing else on the vhost interferes
    env = {"BROKER_URL": amqp_url}
    api = start_api(env)
    start_worker("internal", host=host, concurrency=1, env=env)
    with httpx.Client(base_url=api.url, timeout=30) as c:
        r = c.post("/api/form/tools/diag/execute?wait=15",
                   json={"action": "echo", "params": {"message": "via rabbit"}, "target": host})
        assert r.status_code == 200, r.text
        assert r.json()["output"] == {"message": "via rabbit"}
        record = c.get(f"/api/executions/{r.json()['execution_id']}").json()
        assert record["queue"] == f"internal@{host}" and record["worker"].endswith(f"@{host}")
    with Connection(amqp_url) as conn:  # the per-host queue is durable: leave the shared vhost as we found it
        conn.default_channel.queue_delete(f"internal@{host}")
