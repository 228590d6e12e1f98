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
        assert record["worker"] == first.name
        first.kill()  # SIGKILL the worker and its pool process while the tool sleeps

        second = start_worker("internal", host="rescuehost", concurrency=1, env=env)
        done = wait_terminal(c, execution_id, timeout=60)
        assert done["status"] == "succeeded", done
        assert done["worker"] == second.name
        assert done["attempts"] == 2
        assert done["output"] == {"slept": 2}

        time.sleep(6)  # past another visibility timeout: nothing runs it again or rewrites the record
        later = c.get(f"/api/executions/{execution_id}").json()
        assert later["finished_at"] == done["finished_at"] and later["attempts"] == 2
