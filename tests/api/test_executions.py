"""Listing executions: filters and cursor paging."""

from __future__ import annotations

import httpx

from tests.conftest import wait_terminal


def test_list_filters_by_tool_and_status_and_pages_with_a_cursor(client: httpx.Client) -> None:
    ids = [client.post("/api/form/tools/diag/execute", json={"action": "echo", "params": {"message": i}}).json()
           ["execution_id"] for i in range(5)]
    for execution_id in ids:
        wait_terminal(client, execution_id)

    seen: list[str] = []
    cursor = None
    while True:
        params = {"tool": "diag", "status": "succeeded", "limit": 2}
        if cursor:
            params["cursor"] = cursor
        page = client.get("/api/executions", params=params).json()
        assert len(page["executions"]) <= 2
        assert all(e["tool_name"] == "diag" and e["status"] == "succeeded" for e in page["executions"])
        seen.extend(e["id"] for e in page["executions"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert set(ids) <= set(seen)
    assert len(seen) == len(set(seen)), "a page repeated an execution"
    # newest first
    assert seen.index(ids[-1]) < seen.index(ids[0])
