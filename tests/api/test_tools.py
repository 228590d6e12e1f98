"""The registry over HTTP: list, details with code, categories, register, update, delete."""

from __future__ import annotations

import httpx


def test_list_tools_shows_definitions_with_schemas_and_availability(client: httpx.Client) -> None:
    body = client.get("/api/form/tools").json()
    assert body["failed"] == []
    tools = {t["name"]: t for t in body["tools"]}
    diag = tools["diag"]
    assert diag["category"] == "internal" and diag["actions"] == ["echo", "sleep", "fail"]
    assert diag["run_file"] == "diag.py" and diag["run_type"] == "python"
    assert diag["params_schemas"]["sleep"]["required"] == ["seconds"]
    assert diag["available"] is True and diag["availability"] == "green" and "testhost" in diag["hosts"]
    only = client.get("/api/form/tools", params={"category": "internal"}).json()["tools"]
    assert {t["category"] for t in only} == {"internal"}


def test_tool_details_and_code(client: httpx.Client) -> None:
    one = client.get("/api/form/tools/introspect").json()
    assert one["name"] == "introspect" and "def run" not in (one["code"] or "")  # dispatcher-built run
    assert "TOOL = ToolSpec(" in one["code"]
    code = client.get("/api/form/tools/diag/code").json()
    assert code["module"] == "executables.internal.diag" and "def _sleep" in code["code"]
    assert client.get("/api/form/tools/nope/code").status_code == 404


def test_categories_count_tools_and_workers(client: httpx.Client) -> None:
    cats = {c["category"]: c for c in client.get("/api/form/categories").json()["categories"]}
    assert cats["internal"]["queue"] == "internal"
    assert cats["internal"]["tools"] >= 2 and cats["internal"]["workers"] >= 1


def test_register_update_and_delete_a_definition(client: httpx.Client) -> None:
    definition = {
        "name": "echo_only", "description": "Echo through diag's module", "category": "internal",
        "actions": ["echo"], "run_file": "diag.py", "weight": 0.7,
        "params_schemas": {"echo": {"type": "object", "properties": {"message": {"type": "string"}},
                                    "additionalProperties": False}},
    }
    created = client.post("/api/form/tools", json=definition)
    assert created.status_code == 201, created.text
    assert created.json()["module"] == "executables.internal.diag" and created.json()["version"] == 1

    assert client.post("/api/form/tools", json=definition).status_code == 409

    run = client.post("/api/form/tools/echo_only/execute?wait=10", json={"action": "echo", "params": {"message": "hi"}})
    assert run.json()["output"] == {"message": "hi"}
    wrong = client.post("/api/form/tools/echo_only/execute", json={"action": "echo", "params": {"message": 5}})
    assert wrong.status_code == 422
    assert client.post("/api/form/tools/echo_only/execute", json={"action": "sleep"}).status_code == 422

    updated = client.put("/api/form/tools/echo_only", json={"description": "changed", "weight": 0.9})
    assert updated.status_code == 200
    assert updated.json()["version"] == 2 and updated.json()["description"] == "changed"

    assert client.put("/api/form/tools/echo_only", json={"weight": 7}).status_code == 422
    assert client.put("/api/form/tools/echo_only", json={"colour": "red"}).status_code == 422

    assert client.delete("/api/form/tools/echo_only").status_code == 204
    assert client.get("/api/form/tools/echo_only").status_code == 404
    assert client.delete("/api/form/tools/echo_only").status_code == 404


def test_register_refuses_bad_definitions(client: httpx.Client) -> None:
    base = {"name": "ghost", "category": "internal", "actions": ["go"], "run_file": "ghost.py"}
    missing_module = client.post("/api/form/tools", json=base)
    assert missing_module.status_code == 422 and "executables.internal.ghost" in missing_module.json()["detail"]
    bad_name = client.post("/api/form/tools", json={**base, "name": "Bad Name!", "run_file": "diag.py"})
    assert bad_name.status_code == 422 and "name" in bad_name.json()["detail"]
    no_actions = client.post("/api/form/tools", json={**base, "actions": [], "run_file": "diag.py"})
    assert no_actions.status_code == 422
    schema_for_unknown = client.post("/api/form/tools", json={**base, "run_file": "diag.py",
                                                              "params_schemas": {"other": {}}})
    assert schema_for_unknown.status_code == 422 and "other" in schema_for_unknown.json()["detail"]
