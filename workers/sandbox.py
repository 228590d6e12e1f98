"""Run runtime-created tool code in a separate, limited process.

Limits: wall-clock timeout (the process group is killed), CPU seconds (RLIMIT_CPU), address
space (RLIMIT_AS), file size (RLIMIT_FSIZE), open files, a fresh scratch working directory
(removed afterwards), an output cap, and an environment holding only the env names the tool
declares. Network: a tool that does not ask for it runs in a new network namespace with no
interfaces up (unshare(CLONE_NEWNET); needs root or user namespaces); where the OS refuses,
the static policy (no socket-capable imports) is the only guard, and the result says so.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolfleet.errors import ExecutableError, ToolTimeout

__all__ = ["Limits", "run_sandboxed", "CHILD"]

CHILD = Path(__file__).with_name("_sandbox_child.py")
CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000


@dataclass
class Limits:
    wall_s: float = 30.0
    cpu_s: int = 30
    memory_mb: int = 256
    max_output_bytes: int = 1_000_000
    max_file_bytes: int = 50_000_000
    network: bool = False
    env_names: tuple[str, ...] = ()


def _preexec(limits: Limits) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    memory = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.max_file_bytes, limits.max_file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.geteuid() != 0:  # root ignores RLIMIT_NPROC; the policy refuses every way to fork anyway
        resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))
    if not limits.network:
        libc = ctypes.CDLL(None, use_errno=True)
        flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
        if libc.unshare(flags) != 0:
            Path("netns-refused").touch()  # in the scratch folder: the result reports "policy-only"


def run_sandboxed(source_path: Path, *, mode: str, request: dict[str, Any], limits: Limits, tool: str,
                  allowed_imports: frozenset[str], scratch_root: Path) -> dict[str, Any]:
    """Answers the child's result dict (`ok`, `output` or `error`, `printed`, `sandbox`).

    Raises ToolTimeout past the wall clock, ExecutableError when the process is killed or floods output."""
    scratch_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{tool}-", dir=scratch_root)).resolve()
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": str(scratch),
           "HF_HUB_OFFLINE": "1"}
    env.update({k: os.environ[k] for k in limits.env_names if k in os.environ})
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-I", str(CHILD), mode, str(source_path), str(scratch), ",".join(sorted(allowed_imports)),
         tool],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=scratch, env=env,
        start_new_session=True, preexec_fn=lambda: _preexec(limits),  # noqa: PLW1509 - limits must apply pre-exec
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(request).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        os.set_blocking(proc.stdout.fileno(), False)
        chunks, size = [], 0
        while True:
            remaining = limits.wall_s - (time.monotonic() - started)
            if remaining <= 0:
                _kill(proc)
                raise ToolTimeout(f"{tool} ran past its time limit of {limits.wall_s:g}s in the sandbox and was "
                                  "killed")
            try:
                chunk = proc.stdout.read(65536)
            except BlockingIOError:
                chunk = None
            if chunk:
                chunks.append(chunk)
                size += len(chunk)
                if size > limits.max_output_bytes:
                    _kill(proc)
                    raise ExecutableError(f"{tool} produced more than {limits.max_output_bytes} bytes of output; "
                                          "the sandbox stopped it")
                continue
            if chunk == b"" and proc.poll() is not None:
                break
            time.sleep(0.005)
        proc.wait()
        raw = b"".join(chunks)
        if proc.returncode != 0 or not raw:
            raise ExecutableError(_death(proc.returncode, limits, tool))
        result: dict[str, Any] = json.loads(raw)
        result["sandbox"] = {"network": "allowed" if limits.network else
                             ("policy-only" if (scratch / "netns-refused").exists() else "isolated (netns)"),
                             "memory_mb": limits.memory_mb, "cpu_s": limits.cpu_s}
        return result
    finally:
        _kill(proc)
        shutil.rmtree(scratch, ignore_errors=True)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _death(code: int | None, limits: Limits, tool: str) -> str:
    if code is not None and code < 0:
        sig = signal.Signals(-code).name
        if sig == "SIGXCPU":
            return f"{tool} used more than {limits.cpu_s}s of CPU and was killed (SIGXCPU)"
        if sig == "SIGXFSZ":
            return f"{tool} wrote a file larger than {limits.max_file_bytes} bytes and was killed (SIGXFSZ)"
        return f"{tool} was killed by {sig} in the sandbox (memory limit {limits.memory_mb} MB, CPU {limits.cpu_s}s)"
    return f"{tool} exited with code {code} before answering (memory limit {limits.memory_mb} MB)"
