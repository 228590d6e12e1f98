"""Forge: accept Python code for a new tool (or a new version), validate it, pre-flight it in the
sandbox, store it as an immutable version, roll back. Used by the API; nothing here imports the code."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from registry.db import Conn
from registry.definitions import ToolDefinition
from registry.forge import add_version, get_version, list_versions, record_event
from registry.forge_policy import check_source
from registry.tools import get_tool, upsert_tool
from toolfleet.errors import ToolfleetError
from toolfleet.settings import get_settings
from workers.forge_runtime import allowed_imports, excerpt
from workers.sandbox import Limits, run_sandboxed

__all__ = ["CodeRefused", "PreflightFailed", "ForgeConflict", "validate_and_preflight", "create_runtime_tool",
           "new_version", "rollback"]


class CodeRefused(ToolfleetError):
    """The code breaks the policy (answered 422 with each violation's line and rule)."""

    def __init__(self, violations: list[dict[str, Any]]) -> None:
        first = violations[0]
        super().__init__(f"code refused: line {first['line']}: {first['rule']}: {first['message']}"
                         + (f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""))
        self.violations = violations


class PreflightFailed(ToolfleetError):
    """Loading the code in the sandbox failed (answered 422 with the traceback and the source)."""

    def __init__(self, error: dict[str, Any], source: str) -> None:
        super().__init__(f"pre-flight failed: {error.get('type')}: {error.get('message')}")
        self.error = {**error, "source_excerpt": excerpt(source, error.get("line"))}


class ForgeConflict(ToolfleetError):
    """A request that does not fit the tool's kind or state (answered 409)."""


def validate_and_preflight(definition: ToolDefinition, source: str) -> dict[str, Any]:
    """Static policy, then import + self-test in the sandbox; answers the pre-flight result."""
    violations = check_source(source, definition.actions, allowed_imports=allowed_imports(definition.network),
                              network=definition.network)
    if violations:
        raise CodeRefused([v.as_dict() for v in violations])
    with tempfile.TemporaryDirectory(prefix="toolfleet-preflight-") as folder:
        path = Path(folder) / "tool.py"
        path.write_text(source, encoding="utf-8")
        path.chmod(0o644)
        limits = Limits(wall_s=min(30.0, definition.time_limit_s + 5), cpu_s=30, memory_mb=definition.memory_mb,
                        network=definition.network, env_names=tuple(definition.requires_env))
        try:
            result = run_sandboxed(path, mode="preflight", request={"actions": definition.actions}, limits=limits,
                                   tool=definition.name, allowed_imports=allowed_imports(definition.network),
                                   scratch_root=get_settings().state_path() / "sandbox")
        except ToolfleetError as exc:
            raise PreflightFailed({"type": type(exc).__name__, "message": str(exc), "traceback": None,
                                   "line": None}, source) from None
    if not result["ok"]:
        raise PreflightFailed(result["error"], source)
    return {"schemas": result.get("schemas", {}), "selftest": result.get("selftest"),
            "sandbox": result.get("sandbox")}


def _with_schemas(definition: ToolDefinition, preflight: dict[str, Any]) -> ToolDefinition:
    schemas = {**preflight.get("schemas", {}), **definition.params_schemas}  # explicit schemas win
    unknown = sorted(set(schemas) - set(definition.actions) - {"selftest"})
    if unknown:
        raise CodeRefused([{"line": 1, "rule": "interface",
                            "message": f"PARAMS names actions not declared in `actions`: {', '.join(unknown)}"}])
    return definition.model_copy(update={"params_schemas": {a: s for a, s in schemas.items()
                                                            if a in definition.actions}})


def _record_failure(conn: Conn, name: str, version: int | None, exc: ToolfleetError) -> None:
    details: dict[str, Any] = {"message": str(exc)}
    if isinstance(exc, CodeRefused):
        details["violations"] = exc.violations
    if isinstance(exc, PreflightFailed):
        details["error"] = {k: v for k, v in exc.error.items() if k != "traceback"}
    record_event(conn, name, version, "ToolLoadFailed", **details)


def create_runtime_tool(conn: Conn, definition: ToolDefinition, source: str, author: str) -> ToolDefinition:
    if conn.execute("SELECT 1 FROM tools WHERE name = %s", (definition.name,)).fetchone():
        raise ForgeConflict(f"a tool named {definition.name!r} exists; PUT /api/form/tools/{definition.name} "
                            "with `code` makes a new version")
    definition = definition.model_copy(update={"run_type": "sandboxed", "module": "", "builtin": False,
                                               "version": 1, "run_file": f"{definition.name}.py", "status": "ok"})
    try:
        preflight = validate_and_preflight(definition, source)
        definition = _with_schemas(definition, preflight)
    except (CodeRefused, PreflightFailed) as exc:
        _record_failure(conn, definition.name, None, exc)
        raise
    with conn.transaction():
        stored = upsert_tool(conn, definition)
        add_version(conn, name=definition.name, version=1, source=source, author=author,
                    definition=stored.model_dump(), preflight=preflight)
        record_event(conn, definition.name, 1, "ToolCreated", author=author)
    return stored


def new_version(conn: Conn, name: str, changes: dict[str, Any], source: str | None, author: str) -> ToolDefinition:
    current = get_tool(conn, name)
    if current.run_type != "sandboxed":
        raise ForgeConflict(f"{name!r} is a built-in tool: its code lives in the repository, not in the API")
    if source is None:
        source = get_version(conn, name, current.version)["source"]
    latest = max(v["version"] for v in list_versions(conn, name))
    definition = ToolDefinition(**{**current.model_dump(), **changes, "version": latest + 1, "status": "ok"})
    try:
        preflight = validate_and_preflight(definition, source)
        definition = _with_schemas(definition, preflight)
    except (CodeRefused, PreflightFailed) as exc:
        _record_failure(conn, name, latest + 1, exc)
        raise
    with conn.transaction():
        conn.execute("UPDATE tools SET consecutive_failures = 0 WHERE name = %s", (name,))
        stored = upsert_tool(conn, definition)
        add_version(conn, name=name, version=definition.version, source=source, author=author,
                    definition=stored.model_dump(), preflight=preflight)
        record_event(conn, name, definition.version, "ToolUpdated", author=author, previous=current.version)
    return stored


def rollback(conn: Conn, name: str, version: int, author: str) -> ToolDefinition:
    current = get_tool(conn, name)
    if current.run_type != "sandboxed":
        raise ForgeConflict(f"{name!r} is a built-in tool; only runtime-created tools have versions to roll back to")
    row = get_version(conn, name, version)
    if row["status"] == "broken":
        raise ForgeConflict(f"version {version} of {name!r} is marked broken; roll back to an ok version")
    definition = ToolDefinition(**{**row["definition"], "version": version, "status": "ok"})
    with conn.transaction():
        conn.execute("UPDATE tools SET consecutive_failures = 0 WHERE name = %s", (name,))
        stored = upsert_tool(conn, definition)
        record_event(conn, name, version, "ToolRolledBack", author=author, previous=current.version)
    return stored
