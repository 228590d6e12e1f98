"""Forge through the API only: create a tool, run it on a worker, update, break, repair context,
broken listing, rollback; the hostile corpus; network isolation of the sandbox."""

from __future__ import annotations

import re
import socket
import threading
from pathlib import Path

import httpx
import pytest

from registry.forge_policy import DEFAULT_ALLOWED_IMPORTS
from tests.conftest import ROOT
from workers.sandbox import Limits, run_sandboxed

CORPUS = sorted((ROOT / "tests" / "forge_corpus").glob("*.py"))

V1 = '''
from pydantic import BaseModel, Field


class AddParams(BaseModel):
    a: float = Field(description="first number")
    b: float = Field(description="second number")


PARAMS = {"add": AddParams}


def run(action, params):
    if action != "add":
        raise ValueError(f"unknown action {action!r}")
    p = AddParams(**params)
    return {"sum": p.a + p.b}
'''


def _run(c: httpx.Client, name: str, action: str, params: dict) -> dict:
    r = c.post(f"/api/form/tools/{name}/execute?wait=30", json={"action": action, "params": params})
    assert r.status_code in (200, 202), r.text
    return c.get(f"/api/executions/{r.json()['execution_id']}").json()


def test_create_run_update_break_repair_rollback(client: httpx.Client) -> None:
    c = client
    r = c.post("/api/form/tools", headers={"x-toolfleet-author": "agent-7"}, json={
        "name": "adder", "description": "Add two numbers", "category": "internal", "actions": ["add"], "code": V1})
    assert r.status_code == 201, r.text
    tool = r.json()
    assert tool["run_type"] == "sandboxed" and tool["version"] == 1
    assert tool["params_schemas"]["add"]["required"] == ["a", "b"]  # from the code's pydantic model
    assert c.post("/api/form/tools/adder/execute", json={"action": "add", "params": {"a": 1}}).status_code == 422

    rec = _run(c, "adder", "add", {"a": 2, "b": 3})
    assert rec["status"] == "succeeded" and rec["output"] == {"sum": 5.0} and rec["tool_version"] == 1
    assert rec["worker"].startswith("internal.")

    v2 = V1.replace('return {"sum": p.a + p.b}', 'return {"sum": p.a + p.b, "version": 2}')
    r = c.put("/api/form/tools/adder", json={"code": v2, "description": "Add two numbers, v2"})
    assert r.status_code == 200, r.text and r.json()["version"] == 2
    rec = _run(c, "adder", "add", {"a": 2, "b": 3})
    assert rec["output"] == {"sum": 5.0, "version": 2} and rec["tool_version"] == 2

    broken = V1.replace('return {"sum": p.a + p.b}', 'return {"sum": (p.a + p.b) / 0}')
    assert c.put("/api/form/tools/adder", json={"code": broken}).json()["version"] == 3
    for _ in range(3):
        rec = _run(c, "adder", "add", {"a": 1, "b": 1})
        assert rec["status"] == "failed"
    err = rec["error"]
    assert err["type"] == "SandboxedToolError" and "ZeroDivisionError: float division by zero" in err["message"]
    assert err["version"] == 3 and "ZeroDivisionError" in err["traceback"]
    line = next(i for i, text in enumerate(broken.splitlines(), 1) if "/ 0" in text)
    assert err["line"] == line and f">   {line}" in err["source_excerpt"] and "/ 0" in err["source_excerpt"]
    assert "def run(action, params)" in err["source"]

    listing = c.get("/api/form/tools").json()
    assert [f["name"] for f in listing["failed"]] == ["adder"]
    assert listing["failed"][0]["last_error"]["type"] == "ZeroDivisionError"
    kinds = [e["kind"] for e in c.get("/api/form/tools/adder/events").json()["events"]]
    assert kinds[0] == "ToolMarkedBroken" and "ToolExecutionFailed" in kinds and "ToolCreated" in kinds
    assert kinds.count("ToolUpdated") == 2

    versions = c.get("/api/form/tools/adder/versions").json()
    assert [(v["version"], v["status"], v["author"]) for v in versions["versions"]] == [
        (1, "ok", "agent-7"), (2, "ok", "anonymous"), (3, "broken", "anonymous")]
    assert "version" not in c.get("/api/form/tools/adder/versions/1").json()["source"].split("return")[-1]
    assert c.get("/api/form/tools/adder/versions/9").status_code == 404
    assert c.post("/api/form/tools/adder/rollback", json={"version": 3}).status_code == 409

    back = c.post("/api/form/tools/adder/rollback", json={"version": 2})
    assert back.status_code == 200 and back.json()["version"] == 2 and back.json()["status"] == "ok"
    rec = _run(c, "adder", "add", {"a": 20, "b": 22})
    assert rec["output"] == {"sum": 42.0, "version": 2} and rec["tool_version"] == 2
    assert c.get("/api/form/tools").json()["failed"] == []
    assert '"version": 2' in c.get("/api/form/tools/adder/code").json()["code"]
    # built-in tools keep their code in the repository
    assert c.put("/api/form/tools/diag", json={"code": V1}).status_code == 409
    assert c.post("/api/form/tools", json={"name": "adder", "category": "internal", "actions": ["add"],
                                           "code": V1}).status_code == 409


def _meta(source: str) -> dict[str, str]:
    return dict(re.findall(r"^# (\w+): (.*)$", source, re.M))


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_hostile_corpus(client: httpx.Client, path: Path) -> None:
    source = path.read_text()
    meta = _meta(source)
    expect = meta["expect"].split(" ", 1)
    outcome, text = expect[0], (expect[1] if len(expect) > 1 else "")
    name = f"corpus_{path.stem}"[:60]
    client.delete(f"/api/form/tools/{name}")
    body = {"name": name, "category": "internal", "actions": meta.get("actions", "go").split(","), "code": source,
            "time_limit_s": float(meta.get("time_limit", 10)), "memory_mb": int(meta.get("memory_mb", 256)),
            "network": meta.get("network") == "true"}
    r = client.post("/api/form/tools", json=body)
    if outcome == "refused":
        assert r.status_code == 422, r.text
        rules = [v["rule"] for v in r.json()["violations"]]
        assert text in rules, r.json()
        assert all(v["line"] >= 1 for v in r.json()["violations"])
        assert client.get(f"/api/form/tools/{name}").status_code == 404
        return
    if outcome == "preflight":
        assert r.status_code == 422 and r.json()["error"] == "preflight_failed", r.text
        assert text in r.json()["detail"] and "Traceback" in (r.json()["preflight"]["traceback"] or "")
        return
    assert r.status_code == 201, r.text
    rec = _run(client, name, "go", {})
    assert rec["status"] == outcome, rec
    if text:
        assert text in rec["error"]["message"] or text in (rec["error"].get("traceback") or ""), rec["error"]
    # the worker keeps serving
    assert client.post("/api/form/tools/diag/execute?wait=15", json={"action": "echo"}).json()["success"]


def _server() -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    threading.Thread(target=lambda: srv.accept()[0].sendall(b"hello"), daemon=True).start()
    return srv, srv.getsockname()[1]


def test_the_sandbox_enforces_no_network_even_if_code_could_open_a_socket(tmp_path: Path) -> None:
    srv, port = _server()
    source = tmp_path / "net.py"
    source.write_text(f'''
import socket
def run(action, params):
    s = socket.create_connection(("127.0.0.1", {port}), timeout=3)
    return s.recv(5).decode()
''')
    allowed = DEFAULT_ALLOWED_IMPORTS | {"socket"}  # pretend the policy let socket through
    isolated = run_sandboxed(source, mode="run", request={"action": "go"}, limits=Limits(wall_s=10, network=False),
                             tool="net", allowed_imports=allowed, scratch_root=tmp_path / "s")
    assert isolated["ok"] is False and isolated["error"]["type"] in ("OSError", "ConnectionRefusedError")
    assert isolated["sandbox"]["network"] == "isolated (netns)"
    allowed_net = run_sandboxed(source, mode="run", request={"action": "go"}, limits=Limits(wall_s=10, network=True),
                                tool="net", allowed_imports=allowed, scratch_root=tmp_path / "s")
    assert allowed_net == {**allowed_net, "ok": True, "output": "hello"}
    srv.close()


def test_the_sandbox_inherits_no_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "do-not-leak")
    monkeypatch.setenv("DECLARED_TOKEN", "mine")
    source = tmp_path / "env.py"
    source.write_text("import os\ndef run(action, params):\n    return dict(os.environ)\n")
    result = run_sandboxed(source, mode="run", request={"action": "go"},
                           limits=Limits(wall_s=10, env_names=("DECLARED_TOKEN",)), tool="env",
                           allowed_imports=DEFAULT_ALLOWED_IMPORTS | {"os"}, scratch_root=tmp_path / "s")
    env = result["output"]
    assert env["DECLARED_TOKEN"] == "mine" and "SECRET_TOKEN" not in env and "DATABASE_URL" not in env
