"""terminal and file tools on a real `terminal` worker, with real subprocesses and files."""

from __future__ import annotations

import os

import httpx

from tests.executables.conftest import run


def test_run_a_command(tf: httpx.Client) -> None:
    rec = run(tf, "terminal", "run", {"command": ["echo", "hi"]})
    assert rec["status"] == "succeeded", rec
    out = rec["output"]
    assert out["stdout"] == "hi\n" and out["stderr"] == "" and out["exit_code"] == 0
    assert rec["worker"].endswith("@termhost") and rec["queue"] == "terminal"


def test_shell_cwd_env_stdin_and_exit_code(tf: httpx.Client) -> None:
    run(tf, "file_write", "write", {"path": "sub/x.txt", "content": "data"})
    rec = run(tf, "terminal", "run", {"command": "cat x.txt; echo \"$GREETING\" >&2; read line; echo got:$line; "
                                                 "exit 3", "shell": True, "cwd": "sub",
                                      "env": {"GREETING": "hello"}, "stdin": "typed\n"})
    out = rec["output"]
    assert rec["status"] == "succeeded"  # the command ran; its exit code is data
    assert out["exit_code"] == 3 and out["stdout"] == "datagot:typed\n" and out["stderr"] == "hello\n"
    assert out["cwd"] == "sub"


def test_string_command_without_shell_is_refused_with_the_fix(tf: httpx.Client) -> None:
    rec = run(tf, "terminal", "run", {"command": "ls -l"})
    assert rec["status"] == "failed"
    assert "a string command needs shell: true" in rec["error"]["message"]


def test_a_command_that_never_ends_is_killed_with_its_children(tf: httpx.Client) -> None:
    rec = run(tf, "terminal", "run", {"command": "sleep 300 & sleep 301; echo never", "shell": True,
                                      "timeout_s": 1})
    assert rec["status"] == "timed_out", rec
    assert "timeout_s=1" in rec["error"]["message"] and "process group was killed" in rec["error"]["message"]
    assert rec["duration_ms"] < 10_000
    leftovers = [p for p in os.popen("pgrep -f 'sleep 30[01]'").read().split() if p]
    assert leftovers == [], "the command's children outlived it"
    assert run(tf, "terminal", "run", {"command": ["true"]})["status"] == "succeeded"


def test_megabytes_of_output_keep_the_tail_and_say_so(tf: httpx.Client) -> None:
    rec = run(tf, "terminal", "run", {"command": ["python3", "-c", "import sys\nfor i in range(200000): "
                                                  "print(f'line {i:06d} ' + 'x' * 40)"],
                                      "max_output_bytes": 10_000})
    out = rec["output"]
    assert rec["status"] == "succeeded"
    assert out["truncated"]["stdout"] is True and out["stdout_bytes"] > 9_000_000
    assert len(out["stdout"]) <= 10_000 and out["stdout"].rstrip().endswith("line 199999 " + "x" * 40)


def test_streaming_puts_lines_in_the_record_while_it_runs(tf: httpx.Client) -> None:
    import time

    r = tf.post("/api/form/tools/terminal/execute", json={"action": "run", "params": {
        "command": "for i in 1 2 3; do echo tick $i; sleep 0.7; done", "shell": True, "stream": True}})
    execution_id = r.json()["execution_id"]
    seen_partial = False
    for _ in range(60):
        rec = tf.get(f"/api/executions/{execution_id}").json()
        if rec["status"] == "running" and "tick 1" in rec["log"] and "tick 3" not in rec["log"]:
            seen_partial = True
        if rec["status"] == "succeeded":
            break
        time.sleep(0.1)
    assert seen_partial, "no output appeared in the record before the command ended"
    assert "tick 3" in rec["log"]


def test_missing_command_is_a_clear_failure(tf: httpx.Client) -> None:
    rec = run(tf, "terminal", "run", {"command": ["no-such-program-xyz"]})
    assert rec["status"] == "failed" and "command not found" in rec["error"]["message"]


def test_file_tools_round_trip(tf: httpx.Client) -> None:
    assert run(tf, "file_write", "write", {"path": "notes/a.txt", "content": "alpha\nbeta\n"})["status"] == "succeeded"
    read = run(tf, "file_read", "read", {"path": "notes/a.txt"})["output"]
    assert read["content"] == "alpha\nbeta\n" and read["size"] == 11 and read["truncated"] is False
    edit = run(tf, "file_edit", "replace", {"path": "notes/a.txt", "old": "beta", "new": "gamma"})
    assert edit["output"] == {"path": "notes/a.txt", "replaced": 1, "line": 2}
    assert run(tf, "file_read", "read", {"path": "notes/a.txt"})["output"]["content"] == "alpha\ngamma\n"
    listing = run(tf, "file_list", "list", {"path": "notes"})["output"]
    assert {"path": "notes/a.txt", "type": "file", "size": 12} in listing["entries"]
    run(tf, "file_write", "write", {"path": "notes/deep/b.md", "content": "needle here\n"})
    assert "notes/deep/b.md" in run(tf, "glob", "match", {"pattern": "**/*.md"})["output"]["matches"]
    hits = run(tf, "grep", "search", {"pattern": "NEEDLE", "ignore_case": True})["output"]["matches"]
    assert {"path": "notes/deep/b.md", "line": 1, "text": "needle here"} in hits


def test_file_edit_refuses_missing_and_ambiguous_snippets(tf: httpx.Client) -> None:
    run(tf, "file_write", "write", {"path": "dup.txt", "content": "x x"})
    missing = run(tf, "file_edit", "replace", {"path": "dup.txt", "old": "y", "new": "z"})
    assert missing["status"] == "failed" and "not found" in missing["error"]["message"]
    twice = run(tf, "file_edit", "replace", {"path": "dup.txt", "old": "x", "new": "z"})
    assert twice["status"] == "failed" and "2 times" in twice["error"]["message"]


def test_paths_outside_the_workspace_are_refused(tf: httpx.Client, stack) -> None:  # type: ignore[no-untyped-def]
    workspace = stack.root / "workspace"
    workspace.mkdir(exist_ok=True)
    link = workspace / "escape"
    if not link.exists():
        link.symlink_to("/etc")
    for tool, action, params in [
        ("file_read", "read", {"path": "../../etc/passwd"}),
        ("file_read", "read", {"path": "/etc/passwd"}),
        ("file_read", "read", {"path": "escape/passwd"}),
        ("file_write", "write", {"path": "../outside.txt", "content": "x"}),
        ("file_list", "list", {"path": ".."}),
        ("terminal", "run", {"command": ["ls"], "cwd": "../"}),
    ]:
        rec = run(tf, tool, action, params)
        assert rec["status"] == "failed", (tool, params, rec)
        assert rec["error"]["type"] == "PathEscape" and "outside the workspace root" in rec["error"]["message"]
    listed = run(tf, "file_list", "list", {"path": "."})["output"]["entries"]
    assert all(not e["path"].startswith("escape") for e in listed)
    assert not (stack.root / "outside.txt").exists()
