"""Prometheus metrics from the API and from a worker, scraped as Prometheus would; /api/queues; JSON logs."""

from __future__ import annotations

import json
import time

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import ApiProc, free_port


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _value(samples: dict, name: str, **labels: str) -> float:  # type: ignore[type-arg]
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_api_metrics_count_requests_and_submissions(client: httpx.Client) -> None:
    before = _samples(client.get("/metrics").text)
    for _ in range(3):
        client.post("/api/form/tools/diag/execute", json={"action": "echo", "params": {}})
    client.post("/api/form/tools/nope/execute", json={"action": "x"})
    after = _samples(client.get("/metrics").text)
    route = "/api/form/tools/{name}/execute"
    assert _value(after, "toolfleet_submissions_total", tool="diag", action="echo") - \
        _value(before, "toolfleet_submissions_total", tool="diag", action="echo") == 3
    assert _value(after, "toolfleet_api_requests_total", method="POST", route=route, status="202") >= 3
    assert _value(after, "toolfleet_api_requests_total", method="POST", route=route, status="404") >= 1
    assert _value(after, "toolfleet_api_request_seconds_count", method="POST", route=route) >= 4


def test_worker_metrics_and_json_logs(start_worker, start_api) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    env = {"TOOLFLEET_LOG_FORMAT": "json"}
    worker = start_worker("internal", host="metricshost", concurrency=2, env=env, args=["--metrics-port", str(port)])
    api: ApiProc = start_api()
    with api.client() as c:
        for i in range(4):
            r = c.post("/api/form/tools/diag/execute?wait=10", json={"action": "echo", "params": {"message": i},
                                                                     "target": "metricshost"})
            assert r.json()["success"]
        c.post("/api/form/tools/diag/execute?wait=10", json={"action": "fail", "params": {"message": "logged"},
                                                             "target": "metricshost"})
        time.sleep(1.5)  # one heartbeat: queue depth and slots
        samples = _samples(httpx.get(f"http://127.0.0.1:{port}/metrics").text)
        assert _value(samples, "toolfleet_executions_total", tool="diag", category="internal", status="succeeded") >= 4
        assert _value(samples, "toolfleet_executions_total", tool="diag", category="internal", status="failed") >= 1
        assert _value(samples, "toolfleet_execution_duration_seconds_count", tool="diag", category="internal") >= 5
        assert ("toolfleet_queue_depth", (("queue", "internal@metricshost"),)) in samples
        assert _value(samples, "toolfleet_worker_busy_processes", category="internal") == 0
        queues = c.get("/api/queues").json()
        internal = [q for q in queues["queues"] if q["category"] == "internal"][0]
        assert internal["depth"] == 0 and internal["workers"] >= 1 and internal["consumers"] >= 2
        assert "metricshost" in internal["hosts"] and internal["oldest_waiting_s"] is None
        assert "prefetched" in queues["note"]
    lines = [json.loads(line) for line in worker.log.read_text().splitlines() if line.startswith("{")]
    failed = [x for x in lines if x.get("tool") == "diag" and "logged" in x.get("message", "")]
    assert failed, "no JSON log line carried the failing execution"
    assert failed[0]["execution_id"] and failed[0]["action"] == "fail" and failed[0]["host"] == "metricshost"


def test_queues_show_waiting_work_and_its_age(client: httpx.Client, start_worker) -> None:  # type: ignore[no-untyped-def]
    # nothing consumes `feeds` in this test session's default workers: submitted work waits
    r = client.post("/api/form/tools/webhook/execute", json={"action": "post", "params": {
        "url": "http://127.0.0.1:9/x", "payload": {}}})
    assert r.status_code == 202
    time.sleep(0.3)
    feeds = [q for q in client.get("/api/queues").json()["queues"] if q["category"] == "feeds"][0]
    assert feeds["queued"] >= 1 and feeds["depth"] >= 1 and feeds["oldest_waiting_s"] > 0
