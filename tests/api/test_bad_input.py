"""Every client mistake gets a clear 4xx, and nothing is queued for it."""

from __future__ import annotations

import httpx

from tests.conftest import ApiProc, free_port


def _queued_count(client: httpx.Client) -> int:
    return len(client.get("/api/executions", params={"limit": 500}).json()["executions"])


def test_unknown_tool_is_404(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/nope/execute", json={"action": "x", "params": {}})
    assert r.status_code == 404
    assert r.json()["error"] == "tool_not_found" and "nope" in r.json()["detail"]


def test_unknown_action_is_422_listing_the_valid_actions(client: httpx.Client) -> None:
    before = _queued_count(client)
    r = client.post("/api/form/tools/diag/execute", json={"action": "explode", "params": {}})
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "unknown_action"
    assert body["valid_actions"] == ["echo", "sleep", "fail"]
    assert "echo, sleep, fail" in body["detail"]
    assert _queued_count(client) == before


def test_params_breaking_the_schema_are_422_with_field_errors(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/diag/execute", json={"action": "sleep", "params": {"seconds": "soon"}})
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "invalid_params"
    assert body["errors"][0]["loc"] == ["seconds"]
    assert "seconds" in body["detail"]

    missing = client.post("/api/form/tools/diag/execute", json={"action": "sleep", "params": {}}).json()
    assert missing["errors"][0]["loc"] == ["seconds"] and "required" in missing["errors"][0]["msg"]

    extra = client.post("/api/form/tools/diag/execute", json={"action": "echo", "params": {"mesage": 1}})
    assert extra.status_code == 422 and "mesage" in extra.json()["detail"]

    too_big = client.post("/api/form/tools/diag/execute", json={"action": "sleep", "params": {"seconds": 99999}})
    assert too_big.status_code == 422 and too_big.json()["errors"][0]["loc"] == ["seconds"]


def test_malformed_json_is_422(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/diag/execute", content=b'{"action": "echo",',
                    headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["error"] == "invalid_request" and "not valid JSON" in r.json()["detail"]

    no_action = client.post("/api/form/tools/diag/execute", json={"params": {}})
    assert no_action.status_code == 422 and "action" in no_action.json()["detail"]

    params_not_object = client.post("/api/form/tools/diag/execute", json={"action": "echo", "params": [1]})
    assert params_not_object.status_code == 422


def test_disabled_tool_is_409(client: httpx.Client) -> None:
    assert client.put("/api/form/tools/asyncish", json={"enabled": False}).status_code == 200
    try:
        r = client.post("/api/form/tools/asyncish/execute", json={"action": "double", "params": {"value": 1}})
        assert r.status_code == 409
        assert r.json()["error"] == "tool_disabled" and "PUT /api/form/tools/asyncish" in r.json()["detail"]
    finally:
        client.put("/api/form/tools/asyncish", json={"enabled": True})


def test_wait_out_of_range_and_unknown_execution(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/diag/execute?wait=9999", json={"action": "echo"})
    assert r.status_code == 422 and "wait" in r.json()["detail"]
    assert client.get("/api/executions/not-a-uuid").status_code == 404
    assert client.get("/api/executions/00000000-0000-0000-0000-000000000000").status_code == 404
    assert client.get("/api/executions", params={"status": "bogus"}).status_code == 422
    assert client.get("/api/executions", params={"limit": 0}).status_code == 422


def test_unknown_target_host_is_409_naming_the_live_hosts(client: httpx.Client) -> None:
    r = client.post("/api/form/tools/diag/execute", json={"action": "echo", "target": "elsewhere"})
    assert r.status_code == 409
    assert "testhost" in r.json()["detail"]
    bad = client.post("/api/form/tools/diag/execute", json={"action": "echo", "target": "a b/c"})
    assert bad.status_code == 422


def test_broker_unreachable_at_submit_is_503_and_the_row_is_not_left_queued(
    start_api, internal_worker  # type: ignore[no-untyped-def]
) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    api: ApiProc = start_api({"BROKER_URL": dead, "TOOLFLEET_PUBLISH_TIMEOUT_S": "1"})
    with api.client() as c:
        r = c.post("/api/form/tools/diag/execute", json={"action": "echo", "params": {"message": "lost?"}})
        assert r.status_code == 503
        assert "broker not reachable" in r.json()["detail"] and "BROKER_URL" in r.json()["detail"]
        assert r.headers["retry-after"]
        rows = c.get("/api/executions", params={"tool": "diag", "limit": 500}).json()["executions"]
        mine = [e for e in rows if e["params"] == {"message": "lost?"}]
        assert len(mine) == 1
        assert mine[0]["status"] == "failed" and mine[0]["error"]["type"] == "BrokerUnavailable"
