"""The Python client against a running API, as an agent loop would use it."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import ApiProc
from toolfleet import APIError, AsyncClient, Client


def test_execute_wait_and_read(api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    with Client(api.url) as client:
        result = client.execute("diag", "echo", {"message": {"a": 1}}, wait=15)
        assert result.succeeded and result.done and result.output == {"message": {"a": 1}}
        assert result.worker and result.duration_ms is not None
        execution_id = client.submit("diag", "sleep", {"seconds": 0.3})
        assert client.execution(execution_id).status in ("queued", "running")
        finished = client.wait(execution_id, timeout=15)
        assert finished.succeeded and finished.output == {"slept": 0.3}
        page, _ = client.executions(tool="diag", limit=5)
        assert page[0].tool_name == "diag"
        assert [m.name for m in client.discover("sleep for some seconds or fail on purpose", k=3)][0] == "diag"
        assert "# Tools" in client.context(level=1)
        assert any(t["name"] == "diag" for t in client.tools("internal"))
        assert client.workers()


def test_errors_carry_the_api_message(api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    with Client(api.url) as client:
        with pytest.raises(APIError) as bad_action:
            client.execute("diag", "explode")
        assert bad_action.value.status == 422 and bad_action.value.code == "unknown_action"
        assert "valid actions: echo, sleep, fail" in bad_action.value.detail
        with pytest.raises(APIError) as missing:
            client.tool("nope")
        assert missing.value.status == 404
        failed = client.execute("diag", "fail", {"message": "nope"}, wait=15)
        assert not failed.succeeded and failed.error and failed.error["message"] == "nope"


def test_async_client(api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    async def main() -> list[str]:
        async with AsyncClient(api.url) as client:
            results = await asyncio.gather(*(client.execute("diag", "echo", {"message": i}, wait=15)
                                             for i in range(5)))
            assert sorted(r.output["message"] for r in results) == [0, 1, 2, 3, 4]
            execution_id = await client.submit("diag", "echo", {"message": "later"})
            done = await client.wait(execution_id, timeout=15)
            assert done.output == {"message": "later"}
            with pytest.raises(APIError):
                await client.execute("nope", "x")
            return [m.name for m in await client.discover("run a shell command", k=2)]

    assert asyncio.run(main())[0] == "terminal"


def test_plans_through_the_client(api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    with Client(api.url) as client:
        plan = client.submit_plan([{"call_tool": "diag", "action": "echo", "params": {"message": "a"}},
                                   {"call_tool": "diag", "action": "fail", "params": {"message": "oops"}}],
                                  goal="client plan", review="before_each_block")
        assert plan["status"] == "REVIEW"
        client.approve(plan["plan_id"])
        plan = client.wait_plan(plan["plan_id"])
        assert plan["status"] == "REVIEW" and plan["current_block"] == 1
        client.approve(plan["plan_id"])
        plan = client.wait_plan(plan["plan_id"])
        assert plan["status"] == "FAILED" and plan["error"]["block"] == 1
        client.fix(plan["plan_id"], 1, [{"call_tool": "diag", "action": "echo", "params": {"message": "b"}}],
                   feedback="echo instead")
        client.approve(plan["plan_id"])
        plan = client.wait_plan(plan["plan_id"])
        assert plan["status"] == "DONE"
        saved = client.save_as_tool(plan["plan_id"], "client_saved", {"message": "a"})
        assert saved["run_type"] == "composite"
        with pytest.raises(APIError) as illegal:
            client.approve(plan["plan_id"])
        assert illegal.value.status == 409 and "DONE" in illegal.value.detail
        assert any(p["plan_id"] == plan["plan_id"] for p in client.plans())
