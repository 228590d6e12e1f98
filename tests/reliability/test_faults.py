"""Faults and limits as a user meets them: cancel, idempotency, backpressure, size caps, retries,
a non-idempotent tool whose worker died, and a message the broker lost."""

from __future__ import annotations

import os
import time

import httpx
import redis

from tests.conftest import ApiProc, wait_terminal


def _post(c: httpx.Client, tool: str, action: str, params: dict | None = None, **kw: object) -> httpx.Response:
    return c.post(f"/api/form/tools/{tool}/execute", json={"action": action, "params": params or {}}, **kw)


def _parked_tool(c: httpx.Client, name: str) -> None:
    """A definition on a category no worker consumes: its executions stay queued."""
    c.delete(f"/api/form/tools/{name}")
    r = c.post("/api/form/tools", json={"name": name, "category": "parked", "actions": ["echo"], "run_file": "diag.py",
                                        "module": "executables.internal.diag"})
    assert r.status_code == 201, r.text


def test_cancel_a_queued_and_a_running_execution(client: httpx.Client, start_worker) -> None:  # type: ignore[no-untyped-def]
    _parked_tool(client, "parked_echo")
    queued = _post(client, "parked_echo", "echo").json()["execution_id"]
    r = client.post(f"/api/executions/{queued}/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled" and r.json()["started_at"] is None
    again = client.post(f"/api/executions/{queued}/cancel")
    assert again.status_code == 409 and "already ended (cancelled)" in again.json()["detail"]

    start_worker("terminal", host="cancelhost", concurrency=1)
    running = _post(client, "terminal", "run", {"command": ["sleep", "107"]}, ).json()["execution_id"]
    deadline = time.monotonic() + 20
    while client.get(f"/api/executions/{running}").json()["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r = client.post(f"/api/executions/{running}/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    deadline = time.monotonic() + 15
    while os.popen("pgrep -f 'sleep 10[7]'").read().strip():
        assert time.monotonic() < deadline, "the cancelled command is still running"
        time.sleep(0.2)
    time.sleep(0.5)
    assert client.get(f"/api/executions/{running}").json()["status"] == "cancelled"
    ok = client.post("/api/form/tools/terminal/execute?wait=20", json={"action": "run", "params": {
        "command": ["echo", "still serving"]}, "target": "cancelhost"}).json()
    assert ok["success"] and ok["output"]["stdout"] == "still serving\n"


def test_idempotency_key_header(client: httpx.Client) -> None:
    first = _post(client, "diag", "echo", {"message": 1}, headers={"idempotency-key": "hdr-1"}).json()
    second = _post(client, "diag", "echo", {"message": 1}, headers={"idempotency-key": "hdr-1"}).json()
    other = _post(client, "diag", "echo", {"message": 1}, headers={"idempotency-key": "hdr-2"}).json()
    assert first["execution_id"] == second["execution_id"] != other["execution_id"]


def test_queue_limit_and_rate_limit_answer_429_with_retry_after(start_api, client: httpx.Client) -> None:  # type: ignore[no-untyped-def]
    _parked_tool(client, "parked_limit")
    api: ApiProc = start_api({"TOOLFLEET_QUEUE_LIMITS": '{"parked": 3}'})
    with api.client() as c:
        waiting = len(c.get("/api/executions", params={"status": "queued", "limit": 500}).json()["executions"])
        codes = [_post(c, "parked_limit", "echo").status_code for _ in range(4)]
        assert codes.count(429) >= 1 and codes[0] == 202 or waiting >= 3
        r = _post(c, "parked_limit", "echo")
        assert r.status_code == 429 and "'parked' queue already holds 3" in r.json()["detail"]
        assert int(r.headers["retry-after"]) >= 1
    c = client
    c.delete("/api/form/tools/ratey")
    assert c.post("/api/form/tools", json={"name": "ratey", "category": "internal", "actions": ["echo"],
                                           "run_file": "diag.py", "rate_limit_per_min": 2}).status_code == 201
    assert [_post(c, "ratey", "echo").status_code for _ in range(2)] == [202, 202]
    limited = _post(c, "ratey", "echo")
    assert limited.status_code == 429 and "2 executions per minute" in limited.json()["detail"]
    assert 1 <= int(limited.headers["retry-after"]) <= 60


def test_request_and_output_size_limits(start_api, start_worker, client: httpx.Client) -> None:  # type: ignore[no-untyped-def]
    api: ApiProc = start_api({"TOOLFLEET_MAX_REQUEST_BYTES": "2000"})
    with api.client() as c:
        big = _post(c, "diag", "echo", {"message": "x" * 5000})
        assert big.status_code == 413 and "over 2000 bytes" in big.json()["detail"]
        assert _post(c, "diag", "echo", {"message": "small"}).status_code == 202
    start_worker("internal", host="cappedhost", concurrency=1, env={"TOOLFLEET_MAX_OUTPUT_BYTES": "1000"})
    r = client.post("/api/form/tools/diag/execute?wait=15", json={"action": "echo", "params": {"message": "y" * 5000},
                                                                  "target": "cappedhost"}).json()
    assert r["status"] == "error" and "over the limit of 1000" in r["error"]["message"]


def test_retryable_errors_are_retried_with_backoff_and_permanent_ones_are_not(client: httpx.Client) -> None:
    r = _post(client, "flaky", "try", {"key": f"k{time.time_ns()}", "succeed_on": 3}).json()
    rec = wait_terminal(client, r["execution_id"], timeout=30)
    assert rec["status"] == "succeeded" and rec["output"] == {"tries": 3}
    assert rec["retries"] == 2 and rec["attempts"] == 3
    give_up = wait_terminal(client, _post(client, "flaky", "try", {
        "key": f"g{time.time_ns()}", "succeed_on": 99}).json()["execution_id"], timeout=60)
    assert give_up["status"] == "failed" and give_up["retries"] == 3 and give_up["error"]["type"] == "RetryableError"
    permanent = wait_terminal(client, _post(client, "diag", "fail").json()["execution_id"])
    assert permanent["status"] == "failed" and permanent["retries"] == 0 and permanent["attempts"] == 1


def test_a_non_idempotent_tool_whose_worker_died_is_not_run_twice(start_worker, start_api, stack) -> None:  # type: ignore[no-untyped-def]
    env = {"BROKER_URL": stack.broker_url.rsplit("/", 1)[0] + "/4", "TOOLFLEET_VISIBILITY_TIMEOUT_S": "3"}
    api: ApiProc = start_api(env)
    first = start_worker("terminal", host="mayrun1", concurrency=1, env=env)
    marker = stack.root / "workspace" / f"ran-{time.time_ns()}"
    with api.client() as c:
        execution_id = _post(c, "terminal", "run", {"command": f"echo x >> {marker.name}; sleep 4", "shell": True}
                             ).json()["execution_id"]
        deadline = time.monotonic() + 20
        while not marker.exists():  # the command has started: its side effect happened
            assert time.monotonic() < deadline
            time.sleep(0.05)
        first.kill()
        start_worker("terminal", host="mayrun2", concurrency=1, env=env)
        rec = wait_terminal(c, execution_id, timeout=60)
    assert rec["status"] == "failed" and rec["error"]["type"] == "MayHaveRun"
    assert rec["error"]["may_have_run"] is True and "not idempotent" in rec["error"]["message"]
    assert marker.read_text() == "x\n", "the command ran twice"


def test_a_message_the_broker_lost_is_sent_again(start_worker, start_api, stack) -> None:  # type: ignore[no-untyped-def]
    url = stack.broker_url.rsplit("/", 1)[0] + "/5"
    env = {"BROKER_URL": url, "TOOLFLEET_RESEND_AFTER_S": "2"}
    api: ApiProc = start_api(env)
    with api.client() as c:
        execution_id = _post(c, "diag", "echo", {"message": "lost and found"}).json()["execution_id"]
        redis.Redis.from_url(url).flushdb()  # the broker forgets everything, as a restart without AOF would
        start_worker("internal", host="sweeperhost", concurrency=1, env=env)
        rec = wait_terminal(c, execution_id, timeout=60)
    assert rec["status"] == "succeeded" and rec["output"] == {"message": "lost and found"}
    with __import__("registry.db", fromlist=["connect"]).connect(stack.database_url) as conn:
        assert conn.execute("SELECT resends FROM executions WHERE id = %s", (execution_id,)).fetchone()["resends"] == 1
