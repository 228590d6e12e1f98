"""Targeting a host, heartbeats, and availability from the env names workers have."""

from __future__ import annotations

from tests.conftest import ApiProc


def test_target_pins_the_execution_to_that_hosts_queue(start_worker, api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    other = start_worker("internal", host="otherhost", concurrency=1)
    with api.client() as c:
        for host in ("otherhost", "testhost", "otherhost"):
            r = c.post("/api/form/tools/diag/execute?wait=10", json={"action": "echo", "target": host})
            assert r.status_code == 200, r.text
            record = c.get(f"/api/executions/{r.json()['execution_id']}").json()
            assert record["queue"] == f"internal@{host}"
            assert record["worker"].endswith(f"@{host}")
        workers = c.get("/api/workers").json()["workers"]
        mine = [w for w in workers if w["name"] == other.name][0]
        assert mine["queues"] == ["internal", "internal@otherhost"] and mine["live"] is True


def test_requires_env_decides_availability_and_names_never_values(start_worker, api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    with api.client() as c:
        tool = c.get("/api/form/tools/secretive").json()
        if not tool["available"]:
            assert tool["missing_env"] == ["TF_TEST_TOKEN"] and tool["availability"] == "red"
            refused = c.post("/api/form/tools/secretive/execute", json={"action": "check"})
            assert refused.status_code == 409
            assert refused.json()["missing_env"] == ["TF_TEST_TOKEN"]
            assert "TF_TEST_TOKEN" in refused.json()["detail"]

        start_worker("internal", host="vaulthost", env={"TF_TEST_TOKEN": "s3cr3t-value"})
        tool = c.get("/api/form/tools/secretive").json()
        assert tool["available"] is True and tool["hosts"] == ["vaulthost"]
        r = c.post("/api/form/tools/secretive/execute?wait=10", json={"action": "check", "target": "vaulthost"})
        assert r.json()["output"] == {"token_set": True, "length": 12}
        workers = c.get("/api/workers")
        assert "TF_TEST_TOKEN" in workers.text and "s3cr3t-value" not in workers.text


def test_a_stopped_worker_is_no_longer_live(start_worker, api: ApiProc) -> None:  # type: ignore[no-untyped-def]
    import os
    import signal

    w = start_worker("feeds", host="shorthost", concurrency=1)
    with api.client() as c:
        assert any(x["name"] == w.name for x in c.get("/api/workers").json()["workers"])
        os.kill(w.proc.pid, signal.SIGTERM)  # warm shutdown marks it stopped
        w.proc.wait(30)
        assert not any(x["name"] == w.name for x in c.get("/api/workers").json()["workers"])
        dead = c.get("/api/workers", params={"include_dead": True}).json()["workers"]
        assert [x for x in dead if x["name"] == w.name][0]["live"] is False


