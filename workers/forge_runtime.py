"""Run a runtime-created tool on a worker: fetch the exact version the execution names (from
Postgres, cached on disk by sha256), run it in the sandbox, and describe failures so an agent can
repair the tool (traceback, version, and the source lines around the error)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from registry.db import Conn
from registry.forge import get_version, note_outcome
from registry.forge import sha256 as source_sha
from registry.forge_policy import DEFAULT_ALLOWED_IMPORTS, NETWORK_IMPORTS
from toolfleet.errors import ExecutableError
from toolfleet.settings import get_settings
from workers.sandbox import Limits, run_sandboxed

__all__ = ["SandboxedToolError", "cached_source", "execute_runtime_tool", "allowed_imports", "excerpt"]


class SandboxedToolError(ExecutableError):
    """The tool's code failed in the sandbox; `details` is the repair context."""

    def __init__(self, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.details = details


def allowed_imports(network: bool) -> frozenset[str]:
    extra = os.environ.get("TOOLFLEET_FORGE_ALLOWED_IMPORTS", "")
    base = DEFAULT_ALLOWED_IMPORTS | frozenset(x.strip() for x in extra.split(",") if x.strip())
    return base | (NETWORK_IMPORTS if network else frozenset())


def cached_source(conn: Conn, name: str, version: int) -> tuple[Path, str]:
    """The version's source as a file in this host's cache (keyed by sha256, checked on read)."""
    row = get_version(conn, name, version)
    cache = get_settings().state_path() / "forge-cache"
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"{row['sha256']}.py"
    if not path.exists() or source_sha(path.read_text(encoding="utf-8")) != row["sha256"]:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(row["source"], encoding="utf-8")
        tmp.replace(path)
    return path, row["source"]


def excerpt(source: str, line: int | None, around: int = 3) -> str | None:
    if not line:
        return None
    lines = source.splitlines()
    lo, hi = max(1, line - around), min(len(lines), line + around)
    return "\n".join(f"{'>' if n == line else ' '} {n:4d}  {lines[n - 1]}" for n in range(lo, hi + 1))


def execute_runtime_tool(conn: Conn, claim: dict[str, Any], limit_s: float) -> Any:
    name, version = claim["tool_name"], int(claim["tool_version"])
    path, source = cached_source(conn, name, version)
    limits = Limits(wall_s=limit_s, cpu_s=max(1, int(limit_s)), memory_mb=int(claim["memory_mb"]),
                    network=bool(claim["network"]), env_names=tuple(claim["requires_env"] or ()))
    try:
        result = run_sandboxed(path, mode="run", request={"action": claim["action"], "params": claim["params"]},
                               limits=limits, tool=name, allowed_imports=allowed_imports(limits.network),
                               scratch_root=get_settings().state_path() / "sandbox")
    except ExecutableError as exc:  # killed: memory, CPU, output flood (timeouts propagate as ToolTimeout)
        note_outcome(conn, name, version, False, {"type": type(exc).__name__, "message": str(exc)})
        raise SandboxedToolError(str(exc), {"version": version, "source": source}) from None
    if result["ok"]:
        note_outcome(conn, name, version, True)
        return result["output"]
    error = result["error"]
    note_outcome(conn, name, version, False, error)
    raise SandboxedToolError(f"{error['type']}: {error['message']}", {
        "version": version, "line": error.get("line"), "traceback": error.get("traceback"),
        "source_excerpt": excerpt(source, error.get("line")), "source": source, "printed": result.get("printed"),
        "sandbox": result.get("sandbox")})
