"""Plans through the API: review gates, two categories, $ref, depends_on, fix and resume, cancel,
save as a composite tool, and every kind of bad plan refused before anything is queued."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from registry.db import connect
from registry.definitions import ToolDefinition
from registry.tools import upsert_tool


def wait_status(c: httpx.Client, plan_id: str, *statuses: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        plan = c.get(f"/api/plans/{plan_id}").json()
        if plan["status"] in statuses:
            return plan
        assert time.monotonic() < deadline, f"plan still {plan['status']}: {plan}"
        time.sleep(0.1)


@pytest.fixture()
def pc(client: httpx.Client, start_worker) -> httpx.Client:  # type: ignore[no-untyped-def]
    start_worker.__dict__.setdefault("_terminal", None)
    if start_worker.__dict__["_terminal"] is None:
        start_worker.__dict__["_terminal"] = start_worker("terminal", host="planhost", concurrency=1)
    return client


def _executions(c: httpx.Client) -> int:
    return len(c.get("/api/executions", params={"limit": 500}).json()["executions"])


def test_three_blocks_two_categories_with_review_gates_lazy_steps_and_refs(pc: httpx.Client) -> None:
    body = {"goal": "write a file, echo, read it back", "review": "before_each_block", "blocks": [
        {"primitive_block": [{"tool": "file_write", "action": "write",
                              "params": {"path": "plan/a.txt", "content": "hello plan"}}]},
        {"call_tool": "diag", "action": "echo", "params": {"message": "middle"}},
        {"primitive_block": [
            {"terminal": {"action": "run", "params": {"command": ["cat", "plan/a.txt"]}}},
            {"echo_message": {"$ref": "steps.0.output.stdout"}},
            {"tool": "diag", "action": "echo", "params": {"message": {"$ref": "blocks.1.steps.0.output.message"}},
             "depends_on": [1]},
        ]},
    ]}
    r = pc.post("/api/plans", json=body)
    assert r.status_code == 202, r.text
    plan = r.json()
    assert plan["status"] == "REVIEW" and plan["current_block"] == 0
    step = plan["blocks"][2]["steps"][1]
    assert (step["tool"], step["action"]) == ("diag", "echo")  # {"echo_message": ...} normalised
    for block in range(3):
        assert pc.post(f"/api/plans/{plan['plan_id']}/approve").status_code == 200
        plan = wait_status(pc, plan["plan_id"], "REVIEW", "DONE")
        assert plan["current_block"] == (block + 1 if block < 2 else 2)
    assert plan["status"] == "DONE"
    last = plan["blocks"][2]["steps"]
    assert last[0]["output"]["stdout"] == "hello plan" and last[0]["worker"].startswith("terminal.")
    assert last[1]["output"] == {"message": "hello plan"} and last[1]["worker"].startswith("internal.")
    assert last[2]["output"] == {"message": "middle"}
    record = pc.get(f"/api/executions/{last[1]['execution_id']}").json()
    assert record["plan_id"] == plan["plan_id"] and record["plan_block"] == 2 and record["plan_step"] == 1
    assert [h["event"] for h in plan["history"]].count("approved") == 3
    again = pc.post(f"/api/plans/{plan['plan_id']}/approve")
    assert again.status_code == 409 and "it is DONE" in again.json()["detail"]
    assert again.json()["plan_status"] == "DONE"


def test_failing_block_is_fixed_and_the_plan_resumes_then_saves_as_a_tool(pc: httpx.Client) -> None:
    r = pc.post("/api/plans", json={"goal": "greet", "blocks": [
        {"call_tool": "diag", "action": "echo", "params": {"message": "hello world"}},
        {"call_tool": "diag", "action": "fail", "params": {"message": "wrong step"}},
    ]})
    plan = wait_status(pc, r.json()["plan_id"], "FAILED")
    assert plan["error"]["block"] == 1 and plan["error"]["error"]["message"] == "wrong step"
    bad_fix = pc.post(f"/api/plans/{plan['plan_id']}/fix", json={"from_block": 5, "blocks": [{"diag": "echo"}]})
    assert bad_fix.status_code == 422 and "from_block 5 is out of range" in bad_fix.json()["detail"]
    fixed = pc.post(f"/api/plans/{plan['plan_id']}/fix", json={
        "from_block": 1, "feedback": "echo instead",
        "blocks": [{"primitive_block": [{"tool": "diag", "action": "echo", "params": {"message": "bye"}}]}]})
    assert fixed.status_code == 200, fixed.text
    plan = wait_status(pc, plan["plan_id"], "DONE")
    assert plan["generation"] == 1 and plan["blocks"][1]["steps"][0]["output"] == {"message": "bye"}
    assert [s["status"] for s in plan["trace"] if s["block_index"] == 1] == ["failed", "succeeded"]
    assert any(h["event"] == "fixed" and h["feedback"] == "echo instead" for h in plan["history"])

    saved = pc.post(f"/api/plans/{plan['plan_id']}/save_as_tool", json={
        "name": "greet_twice", "parameters": {"greeting": "hello world"}, "description": "echo a greeting then bye"})
    assert saved.status_code == 201, saved.text
    tool = saved.json()
    assert tool["run_type"] == "composite" and [s["action"] for s in tool["body"]] == ["echo", "echo"]
    assert tool["body"][0]["params"] == {"message": "{greeting}"}  # the failed-then-fixed step is gone
    listed = pc.get("/api/form/tools/greet_twice").json()
    assert listed["available"] is True and listed["category"] == "composite"
    assert "greet_twice" in [m["name"] for m in pc.get("/api/form/discover", params={
        "q": "echo a greeting", "k": 5}).json()["results"]]
    direct = pc.post("/api/form/tools/greet_twice/execute", json={"action": "run", "params": {"greeting": "x"}})
    assert direct.status_code == 409 and "/api/plans" in direct.json()["detail"]

    run = pc.post("/api/plans", json={"blocks": [{"call_tool": "greet_twice", "params": {"greeting": "hola"}}]})
    plan = wait_status(pc, run.json()["plan_id"], "DONE")
    assert [s["output"] for s in plan["blocks"][0]["steps"]] == [{"message": "hola"}, {"message": "bye"}]
    missing = pc.post("/api/plans", json={"blocks": [{"call_tool": "greet_twice", "params": {}}]})
    assert missing.status_code == 422 and "greeting" in missing.json()["detail"]


def test_reject_then_fix_and_after_each_block_verification(pc: httpx.Client) -> None:
    r = pc.post("/api/plans", json={"review": "after_each_block", "blocks": [
        {"call_tool": "diag", "action": "echo", "params": {"message": "draft"}},
        {"call_tool": "diag", "action": "echo", "params": {"message": "second"}}]})
    plan = wait_status(pc, r.json()["plan_id"], "VERIFYING")
    assert plan["blocks"][0]["steps"][0]["output"] == {"message": "draft"}
    rejected = pc.post(f"/api/plans/{plan['plan_id']}/reject", json={"feedback": "say final"}).json()
    assert rejected["status"] == "FIXING"
    assert pc.post(f"/api/plans/{plan['plan_id']}/approve").status_code == 409
    pc.post(f"/api/plans/{plan['plan_id']}/fix", json={"from_block": 0, "blocks": [
        {"call_tool": "diag", "action": "echo", "params": {"message": "final"}},
        {"call_tool": "diag", "action": "echo", "params": {"message": "second"}}]})
    plan = wait_status(pc, plan["plan_id"], "VERIFYING")
    assert plan["blocks"][0]["steps"][0]["output"] == {"message": "final"}
    pc.post(f"/api/plans/{plan['plan_id']}/approve")
    plan = wait_status(pc, plan["plan_id"], "VERIFYING")
    assert plan["current_block"] == 1
    pc.post(f"/api/plans/{plan['plan_id']}/approve")
    assert wait_status(pc, plan["plan_id"], "DONE")["status"] == "DONE"


def test_independent_steps_run_in_parallel_and_dependents_after(pc: httpx.Client) -> None:
    r = pc.post("/api/plans", json={"blocks": [{"primitive_block": [
        {"id": "a", "tool": "diag", "action": "sleep", "params": {"seconds": 1}, "depends_on": []},
        {"id": "b", "tool": "diag", "action": "sleep", "params": {"seconds": 1}, "depends_on": []},
        {"tool": "diag", "action": "echo", "params": {"message": "after"}, "depends_on": ["a", "b"]},
    ]}]})
    plan = wait_status(pc, r.json()["plan_id"], "DONE")
    records = [pc.get(f"/api/executions/{s['execution_id']}").json() for s in plan["blocks"][0]["steps"]]
    a, b, after = records
    assert a["started_at"] < b["finished_at"] and b["started_at"] < a["finished_at"], "a and b did not overlap"
    assert after["started_at"] >= max(a["finished_at"], b["finished_at"])


def test_cancel_stops_the_running_step_and_the_rest(pc: httpx.Client) -> None:
    r = pc.post("/api/plans", json={"blocks": [{"primitive_block": [
        {"tool": "diag", "action": "sleep", "params": {"seconds": 20}},
        {"tool": "diag", "action": "echo", "params": {"message": "never"}}]}]})
    plan_id = r.json()["plan_id"]
    deadline = time.monotonic() + 20
    while pc.get(f"/api/plans/{plan_id}").json()["blocks"][0]["steps"][0]["status"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    cancelled = pc.post(f"/api/plans/{plan_id}/cancel").json()
    assert cancelled["status"] == "CANCELLED"
    assert [s["status"] for s in cancelled["blocks"][0]["steps"]] == ["cancelled", "cancelled"]
    time.sleep(1)
    again = pc.get(f"/api/plans/{plan_id}").json()
    assert [s["status"] for s in again["blocks"][0]["steps"]] == ["cancelled", "cancelled"]
    assert pc.post(f"/api/plans/{plan_id}/cancel").status_code == 409
    assert pc.post("/api/form/tools/diag/execute?wait=10", json={"action": "echo"}).json()["success"]


@pytest.mark.parametrize(("blocks", "message"), [
    ([{"primitive_block": [{"tool": "diag", "action": "echo"}, {"tool": "nope", "action": "x"}]}],
     "block 0 step 1: unknown tool 'nope'"),
    ([{"call_tool": "diag", "action": "echo"}, {"primitive_block": [{"tool": "diag", "action": "explode"}]}],
     "block 1 step 0: tool 'diag' has no action 'explode'"),
    ([{"primitive_block": [{"tool": "diag", "action": "sleep", "params": {"seconds": "soon"}}]}],
     "block 0 step 0: invalid params for diag.sleep: seconds"),
    ([{"primitive_block": [{"tool": "diag", "action": "echo", "depends_on": [1]},
                           {"tool": "diag", "action": "echo", "depends_on": [0]}]}],
     "depends_on forms a cycle among steps [0, 1]"),
    ([{"primitive_block": [{"tool": "diag", "action": "echo", "params": {"message": {"$ref": "steps.4.output"}}}]}],
     "points to a step that does not exist"),
    ([{"primitive_block": [{"tool": "diag", "action": "echo", "depends_on": []},
                           {"tool": "diag", "action": "echo", "depends_on": [],
                            "params": {"message": {"$ref": "steps.0.output"}}}]}],
     "needs step 0 to run first"),
    ([{"primitive_block": [{"blink_twice": True}]}], "cannot normalise step {'blink_twice': True}"),
    ([{"primitive_block": [{"tool": "diag", "action": "echo"}, "just text"]}], "block 0 step 1: a step must be"),
    ([{"call_tool": "diag"}], "has several actions"),
    ([{"mystery": 1}], "block 0: a block needs call_tool or primitive_block"),
])
def test_bad_plans_are_refused_with_block_and_step_and_nothing_runs(pc: httpx.Client, blocks: list,
                                                                    message: str) -> None:
    before = _executions(pc)
    r = pc.post("/api/plans", json={"blocks": blocks})
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"], r.json()["detail"]
    assert _executions(pc) == before


def test_composite_cycles_and_depth_are_refused(pc: httpx.Client, stack) -> None:  # type: ignore[no-untyped-def]
    def composite(name: str, calls: str) -> ToolDefinition:
        return ToolDefinition(name=name, category="composite", actions=["run"], run_file=f"{name}.plan",
                              run_type="composite", body=[{"call_tool": calls, "params": {}}],
                              params_schemas={"run": {"type": "object", "properties": {}}})

    with connect(stack.database_url) as conn:
        upsert_tool(conn, composite("loop_a", "loop_b"))
        upsert_tool(conn, composite("loop_b", "loop_a"))
        for i in range(10):
            upsert_tool(conn, composite(f"deep_{i}", f"deep_{i + 1}"))
    r = pc.post("/api/plans", json={"blocks": [{"call_tool": "loop_a"}]})
    assert r.status_code == 422 and "cycle: loop_a -> loop_b -> loop_a" in r.json()["detail"]
    deep = pc.post("/api/plans", json={"blocks": [{"call_tool": "deep_0"}]})
    assert deep.status_code == 422 and "nest deeper than 8" in deep.json()["detail"]


def test_plan_requests_on_unknown_plans_and_bodies(pc: httpx.Client) -> None:
    assert pc.get("/api/plans/not-a-plan").status_code == 404
    assert pc.post("/api/plans/00000000-0000-0000-0000-000000000000/approve").status_code == 404
    assert pc.post("/api/plans", json={"blocks": []}).status_code == 422
    assert pc.post("/api/plans", json={"blocks": [{"diag": "echo"}], "review": "sometimes"}).status_code == 422
    assert pc.get("/api/plans").json()["plans"]
