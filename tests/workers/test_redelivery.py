"""A worker killed mid-task: the execution is picked up by another worker and ends exactly once."""

from __future__ import annotations

import time

from tests.conftest import wait_terminal


def test_sigkill_mid_task_is_redelivered_to_another_worker_and_ends_once(start_worker, start_api, stack) -> None:  # type: ignore[no-untyped-def]
    # own Redis database and a short visibility timeout, so the lost message comes back within seconds
    env = {"BROKER_URL": stack.broker_url.rsplit("/", 1)[0] + "/1", "TOOLFLEET_VISIBILITY_TIMEOUT_S": "4"}
    api = start_api(env)
    first = start_worker("internal", host="crashhost", concurrency=1, env=env)
    with api.client() as c:
        execution_id = c.post("/api/form/tools/diag/execute",
                              json={"action": "sleep", "params": {"seconds": 2}}).json()["execution_id"]
        deadline = time.monotonic() + 20
        while (record := c.get(f"/api/executions/{execution_id}").json())["status"] != "running":
            assert time.monotonic() < deadline, record
            time.sleep(0.05)
        assert record["worker"], record
        first.kill()  # SIGKILL the worker and its pool process while the tool sleeps

        start_worker("internal", host="rescuehost", concurrency=1, env=env)
        done = wait_terminal(c, execution_id, timeout=60)
        assert done["status"] == "succeeded", done
        # redelivered by the broker after its visibility timeout, or re-queued by a sweeper that saw the owner die
        assert done["worker"] != first.name
        assert done["attempts"] == 2
        assert done["output"] == {"slept": 2}

        time.sleep(6)  # past another visibility timeout: nothing runs it again or rewrites the record
        later = c.get(f"/api/executions/{execution_id}").json()
        assert later["finished_at"] == done["finished_at"] and later["attempts"] == 2


def test_a_plan_whose_worker_is_killed_mid_step_still_finishes(start_worker, start_api, stack) -> None:  # type: ignore[no-untyped-def]
    env = {"BROKER_URL": stack.broker_url.rsplit("/", 1)[0] + "/3", "TOOLFLEET_VISIBILITY_TIMEOUT_S": "4"}
    api = start_api(env)
    first = start_worker("internal", host="plancrash", concurrency=1, env=env)
    with api.client() as c:
        plan_id = c.post("/api/plans", json={"blocks": [{"primitive_block": [
            {"tool": "diag", "action": "sleep", "params": {"seconds": 2}},
            {"tool": "diag", "action": "echo", "params": {"message": "after the crash"}}]}]}).json()["plan_id"]
        deadline = time.monotonic() + 20
        while c.get(f"/api/plans/{plan_id}").json()["blocks"][0]["steps"][0]["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        first.kill()
        start_worker("internal", host="planrescue", concurrency=1, env=env)
        deadline = time.monotonic() + 60
        while (plan := c.get(f"/api/plans/{plan_id}").json())["status"] != "DONE":
            assert plan["status"] == "EXECUTING" and time.monotonic() < deadline, plan
            time.sleep(0.2)
        steps = plan["blocks"][0]["steps"]
        # picked up again by another worker (after the visibility timeout, or re-queued by a sweeper)
        assert steps[0]["attempts"] == 2 and steps[0]["worker"] != first.name
        assert steps[1]["output"] == {"message": "after the crash"}
