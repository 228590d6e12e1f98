"""`terminal`: run a command in the workspace, with a timeout that kills its whole process group."""

from __future__ import annotations

import contextvars
import os
import signal
import subprocess
import threading
import time
from typing import Any

from pydantic import Field, model_validator

from executables.terminal import _workspace
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError, ToolTimeout
from workers.context import append_log


class RunParams(Params):
    command: list[str] | str = Field(description="argv list, e.g. ['echo', 'hi']; a string only with shell: true")
    shell: bool = Field(default=False, description="run `command` (a string) through /bin/sh")
    cwd: str = Field(default=".", description="working directory, relative to the workspace root")
    env: dict[str, str] = Field(default_factory=dict, description="extra environment variables")
    timeout_s: float = Field(default=60, gt=0, le=3500, description="kill the process group after this long")
    max_output_bytes: int = Field(default=64_000, ge=1, le=10_000_000,
                                  description="keep at most this many bytes (the tail) of stdout and of stderr")
    stdin: str | None = Field(default=None, description="text fed to the command's standard input")
    stream: bool = Field(default=False, description="append output lines to the execution's log while it runs")

    @model_validator(mode="after")
    def _shape(self) -> RunParams:
        if isinstance(self.command, str) and not self.shell:
            raise ValueError("a string command needs shell: true; otherwise pass an argv list like ['ls', '-l']")
        if isinstance(self.command, list) and not self.command:
            raise ValueError("command must not be empty")
        return self


TOOL = ToolSpec(
    "terminal",
    "Run shell commands and programs on a worker: argv or shell string, working directory, env, timeout, "
    "captured stdout/stderr and exit code",
    "terminal",
    actions={"run": RunParams},
    weight=0.8,
    time_limit_s=3600,
    idempotent=False,  # a command may have side effects: never run it twice silently
)


class _Tail:
    """Collects a stream, keeping only its last `limit` bytes."""

    def __init__(self, limit: int, stream_name: str, live: bool) -> None:
        self.limit, self.name, self.live = limit, stream_name, live
        self.buf = bytearray()
        self.total = 0

    def pump(self, pipe: Any) -> None:
        for chunk in iter(lambda: pipe.readline(65536), b""):
            self.total += len(chunk)
            self.buf += chunk
            if len(self.buf) > self.limit:
                del self.buf[: len(self.buf) - self.limit]
            if self.live:
                append_log(chunk.decode("utf-8", "replace"))
        pipe.close()

    def text(self) -> str:
        return self.buf.decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _run(p: RunParams) -> dict[str, Any]:
    cwd = _workspace.resolve(p.cwd)
    if not cwd.is_dir():
        raise ExecutableError(f"cwd {p.cwd!r} is not a directory in the workspace")
    argv: list[str] | str = p.command
    env = {**os.environ, **p.env}
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, shell=p.shell, cwd=cwd, env=env, start_new_session=True,
                                stdin=subprocess.PIPE if p.stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError as exc:
        raise ExecutableError(f"command not found: {exc.filename or argv}") from None
    except PermissionError as exc:
        raise ExecutableError(f"not executable: {exc.filename or argv}") from None
    out, err = _Tail(p.max_output_bytes, "stdout", p.stream), _Tail(p.max_output_bytes, "stderr", p.stream)
    # the readers run in copies of this context, so streamed lines reach this execution's log
    readers = [threading.Thread(target=contextvars.copy_context().run, args=(t.pump, pipe), daemon=True)
               for t, pipe in ((out, proc.stdout), (err, proc.stderr))]
    for r in readers:
        r.start()
    try:
        if p.stdin is not None:
            assert proc.stdin is not None
            try:
                proc.stdin.write(p.stdin.encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            proc.wait(timeout=p.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.wait()
            for r in readers:
                r.join(2)
            raise ToolTimeout(
                f"command ran past timeout_s={p.timeout_s:g} and its process group was killed; "
                f"last output: {out.text()[-500:]!r}") from None
    finally:
        # stopped from outside (time limit, cancel), or children left behind: take the whole group down
        _kill_group(proc)
    for r in readers:
        r.join(5)
    return {
        "exit_code": proc.returncode,
        "stdout": out.text(),
        "stderr": err.text(),
        "stdout_bytes": out.total,
        "stderr_bytes": err.total,
        "truncated": {"stdout": out.total > p.max_output_bytes, "stderr": err.total > p.max_output_bytes},
        "duration_ms": round((time.monotonic() - started) * 1000, 1),
        "cwd": _workspace.relative(cwd),
    }


run = TOOL.dispatcher({"run": _run})
