"""The `toolfleet` command as a user runs it: as a subprocess."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.conftest import ROOT, free_port

DEAD_DB = "postgresql://postgres@127.0.0.1:{port}/toolfleet"


def _run(args: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolfleet", *args], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args", [["worker", "--category", "internal"], ["migrate"], ["api"]])
def test_postgres_unreachable_at_start_exits_naming_the_fix(args: list[str]) -> None:
    url = DEAD_DB.format(port=free_port())
    result = _run(args, {"DATABASE_URL": url})
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"Postgres not reachable at {url}" in result.stderr
    assert "set DATABASE_URL or run `toolfleet up`" in result.stderr
    assert "Traceback" not in result.stderr


def test_migrate_twice_is_harmless(stack) -> None:  # type: ignore[no-untyped-def]
    for _ in range(2):
        result = _run(["migrate"], stack.env)
        assert result.returncode == 0, result.stderr
        assert "schema at head" in result.stdout and "introspect" in result.stdout


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.3)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_up_starts_everything_on_embedded_defaults_and_ctrl_c_stops_it_all(tmp_path: Path) -> None:
    ports = {name: free_port() for name in ("api", "flower", "pg", "redis")}
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BROKER_URL")}
    env.update({
        "TOOLFLEET_STATE_DIR": str(tmp_path / "state"),
        "TOOLFLEET_API_PORT": str(ports["api"]),
        "TOOLFLEET_FLOWER_PORT": str(ports["flower"]),
        "TOOLFLEET_EMBEDDED_PG_PORT": str(ports["pg"]),
        "TOOLFLEET_EMBEDDED_REDIS_PORT": str(ports["redis"]),
    })
    proc = subprocess.Popen([sys.executable, "-m", "toolfleet", "up", "--concurrency", "1"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 120
    while not any("Press Ctrl-C" in line for line in lines):
        line = proc.stdout.readline()
        assert line or proc.poll() is None, "".join(lines)
        lines.append(line)
        assert time.monotonic() < deadline, "".join(lines)
    banner = "".join(lines)
    assert f"http://127.0.0.1:{ports['api']}/docs" in banner and f"http://127.0.0.1:{ports['flower']}" in banner
    assert "browser, terminal, memory, feeds, internal" in banner
    try:
        base = f"http://127.0.0.1:{ports['api']}"
        assert httpx.get(f"{base}/docs").status_code == 200
        r = httpx.post(f"{base}/api/form/tools/introspect/execute", json={"action": "list_tools", "params": {}})
        assert r.status_code == 202
        record = httpx.get(f"{base}/api/executions/{r.json()['execution_id']}").json()
        assert record["tool_name"] == "introspect"
        done = httpx.post(f"{base}/api/form/tools/introspect/execute?wait=30", json={"action": "health"}, timeout=40)
        assert done.json()["success"] is True
        # a worker per category reports in
        deadline = time.monotonic() + 30
        while True:
            cats = {w["category"] for w in httpx.get(f"{base}/api/workers").json()["workers"]}
            if cats >= {"browser", "terminal", "memory", "feeds", "internal"} or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert cats >= {"browser", "terminal", "memory", "feeds", "internal"}
        assert httpx.get(f"http://127.0.0.1:{ports['flower']}/").status_code == 200
        assert "flower_" in httpx.get(f"http://127.0.0.1:{ports['flower']}/metrics").text
        descendants = psutil.Process(proc.pid).children(recursive=True)
        assert len(descendants) >= 7  # API, 5 workers (+ pool processes), Flower, Redis
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=90)
    assert proc.returncode == 0, out
    assert "All stopped." in out
    gone, alive = psutil.wait_procs(descendants, timeout=10)
    assert not alive, f"left running: {alive}"
    for name, port in ports.items():
        assert not _port_open(port), f"{name} still listening on {port}"


def test_cli_talks_to_the_api(api, internal_worker) -> None:  # type: ignore[no-untyped-def]
    env = {"TOOLFLEET_API_URL": api.url}
    ran = _run(["run", "diag", "echo", "message=[1,2]", "--json"], env)
    assert ran.returncode == 0, ran.stderr
    import json

    record = json.loads(ran.stdout)
    assert record["status"] == "succeeded" and record["output"] == {"message": [1, 2]}

    pretty = _run(["run", "diag", "sleep", "seconds=0.2"], env)
    assert pretty.returncode == 0 and "diag.sleep" in pretty.stdout and "succeeded" in pretty.stdout

    failed = _run(["run", "diag", "fail", "message=boom"], env)
    assert failed.returncode == 1 and "boom" in failed.stdout

    bad = _run(["run", "diag", "explode"], env)
    assert bad.returncode == 1 and "valid actions: echo, sleep, fail" in bad.stderr

    tools = _run(["tools", "--json"], env)
    assert any(t["name"] == "diag" for t in json.loads(tools.stdout))
    table = _run(["tools", "--category", "internal"], env)
    assert "introspect" in table.stdout

    found = json.loads(_run(["discover", "run a shell command", "--json", "--k", "2"], env).stdout)
    assert found[0]["name"] == "terminal"
    assert "terminal" in _run(["discover", "run a shell command"], env).stdout

    listed = _run(["executions", "--tool", "diag", "--limit", "3", "--json"], env)
    assert all(json.loads(line)["tool_name"] == "diag" for line in listed.stdout.splitlines())
    workers = json.loads(_run(["workers", "--json"], env).stdout)
    assert any(w["category"] == "internal" for w in workers)


def test_cli_without_an_api_names_the_fix() -> None:
    result = _run(["tools"], {"TOOLFLEET_API_URL": f"http://127.0.0.1:{free_port()}"})
    assert result.returncode == 2 and "toolfleet up" in result.stderr


def test_cli_plan_submit_follows_the_plan(api, internal_worker, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    spec = tmp_path / "plan.json"
    spec.write_text(json.dumps({"goal": "cli plan", "review": "before_each_block", "blocks": [
        {"call_tool": "diag", "action": "echo", "params": {"message": "one"}},
        {"primitive_block": [{"diag": "echo"}, {"tool": "diag", "action": "sleep", "params": {"seconds": 0.2}}]}]}))
    env = {"TOOLFLEET_API_URL": api.url}
    waiting = _run(["plan", "submit", str(spec)], env)
    assert waiting.returncode == 0 and "REVIEW" in waiting.stdout and "approve" in waiting.stdout
    done = _run(["plan", "submit", str(spec), "--approve"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "block 1 step 1 diag.sleep: succeeded" in done.stdout and done.stdout.strip().endswith("DONE")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"blocks": [{"primitive_block": [{"tool": "nope", "action": "x"}]}]}))
    refused = _run(["plan", "submit", str(bad)], env)
    assert refused.returncode == 1 and "unknown tool 'nope'" in refused.stderr
