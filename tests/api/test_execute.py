"""Submitting executions over HTTP and reading what the worker recorded."""

from __future__ import annotations

import httpx

from tests.conftest import wait_terminal


def test_execute_answers_202_and_the_record_shows_the_result(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/introspect/execute", json={"action": "list_tools", "params": {}})
    assert r.status_code == 202
    body = r.json()
    assert body["status"] == "queued" and body["queue"] == "internal"
    assert body["url"] == f"/api/executions/{body['execution_id']}"

    record = wait_terminal(client, body["execution_id"])
    assert record["status"] == "succeeded", record
    names = {t["name"] for t in record["output"]}
    assert {"introspect", "diag"} <= names
    assert record["worker"].endswith("@testhost")
    assert record["attempts"] == 1
    assert record["duration_ms"] > 0
    assert record["started_at"] and record["finished_at"] and record["submitted_at"]
    assert record["tool_version"] >= 1
    assert record["error"] is None and record["success"] is True


def test_wait_answers_the_finished_execution_in_the_seed_shape(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/diag/execute?wait=10", json={"action": "echo", "params": {"message": [1, "a"]}})
    assert r.status_code == 200
    body = r.json()
    assert set(body) >= {"tool_name", "action", "status", "output", "error", "duration_ms", "timestamp", "success"}
    assert body["tool_name"] == "diag" and body["action"] == "echo"
    assert body["status"] == "success" and body["success"] is True
    assert body["output"] == {"message": [1, "a"]}


def test_wait_that_runs_out_answers_202_and_the_execution_still_finishes(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/diag/execute?wait=0.3", json={"action": "sleep", "params": {"seconds": 1.5}})
    assert r.status_code == 202
    record = wait_terminal(client, r.json()["execution_id"])
    assert record["status"] == "succeeded"
    assert record["output"] == {"slept": 1.5}
    assert record["duration_ms"] >= 1500


def test_health_reports_database_broker_and_workers(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/introspect/execute?wait=10", json={"action": "health", "params": {}})
    out = r.json()["output"]
    assert out["database"]["ok"] is True and out["broker"]["ok"] is True
    assert "internal" in out["categories_served"]


def test_async_tool_is_awaited_on_the_worker(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/asyncish/execute?wait=10", json={"action": "double", "params": {"value": 21}})
    assert r.json()["output"] == {"doubled": 42}


def test_a_tool_that_raises_is_failed_with_traceback_and_the_worker_keeps_serving(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/diag/execute?wait=10", json={"action": "fail", "params": {"message": "boom"}})
    body = r.json()
    assert body["status"] == "error" and body["success"] is False
    assert body["error"]["type"] == "ExecutableError"
    assert body["error"]["message"] == "boom"
    assert "Traceback" in body["error"]["traceback"] and "diag.py" in body["error"]["traceback"]
    record = client.get(f"/api/executions/{body['execution_id']}").json()
    assert record["status"] == "failed"
    again = client.post("/api/form/tools/diag/execute?wait=10", json={"action": "echo", "params": {"message": 1}})
    assert again.json()["status"] == "success"


def test_a_tool_past_its_time_limit_is_timed_out_and_the_worker_keeps_serving(client: httpx.Client) -> None:
    # diag has a 30 s limit; lower it for this test, then put it back
    assert client.put("/api/form/tools/diag", json={"time_limit_s": 1}).status_code == 200
    try:
        r = client.post("/api/form/tools/diag/execute?wait=15", json={"action": "sleep", "params": {"seconds": 20}})
    finally:
        client.put("/api/form/tools/diag", json={"time_limit_s": 30})
    body = r.json()
    assert body["status"] == "timeout", body
    assert "time limit of 1s" in body["error"]["message"]
    assert 900 <= body["duration_ms"] < 5000
    again = client.post("/api/form/tools/diag/execute?wait=10", json={"action": "echo", "params": {}})
    assert again.json()["status"] == "success"


def test_a_tool_that_ignores_the_soft_limit_is_killed_at_the_hard_limit(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/stubborn/execute?wait=20", json={"action": "hang", "params": {"seconds": 60}})
    body = r.json()
    assert body["status"] == "timeout", body
    assert "process was killed" in body["error"]["message"]
    again = client.post("/api/form/tools/diag/execute?wait=10", json={"action": "echo", "params": {}})
    assert again.json()["status"] == "success"


def test_an_idempotency_key_answers_the_same_execution(client: httpx.Client) -> None:
    payload = {"action": "echo", "params": {"message": "once"}, "idempotency_key": "key-123"}
    first = client.post("/api/form/tools/diag/execute?wait=10", json=payload).json()
    second = client.post("/api/form/tools/diag/execute", json=payload).json()
    assert second["execution_id"] == first["execution_id"]
    listed = client.get("/api/executions", params={"tool": "diag", "limit": 500}).json()["executions"]
    assert sum(1 for e in listed if e["idempotency_key"] == "key-123") == 1
