"""Runtime-created tools: immutable versions with their source and sha256, status, and events
(ToolCreated, ToolUpdated, ToolRolledBack, ToolLoadFailed, ToolExecutionFailed, ToolMarkedBroken)."""

from __future__ import annotations

import hashlib
from typing import Any

from psycopg.types.json import Jsonb

from registry.db import Conn
from toolfleet.errors import ToolfleetError

__all__ = ["BROKEN_AFTER", "VersionNotFound", "sha256", "add_version", "get_version", "list_versions",
           "record_event", "list_events", "note_outcome", "broken_tools"]

#: consecutive failed executions after which a runtime tool is marked broken
BROKEN_AFTER = 3


class VersionNotFound(ToolfleetError):
    def __init__(self, name: str, version: int) -> None:
        super().__init__(f"tool {name!r} has no version {version}; GET /api/form/tools/{name}/versions lists them")


def sha256(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def add_version(conn: Conn, *, name: str, version: int, source: str, author: str, definition: dict[str, Any],
                preflight: dict[str, Any]) -> dict[str, Any]:
    row = conn.execute(
        "INSERT INTO tool_versions (tool_name, version, source, sha256, author, definition, preflight) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING tool_name, version, sha256, author, status, created_at",
        (name, version, source, sha256(source), author, Jsonb(definition), Jsonb(preflight))).fetchone()
    assert row is not None
    return row


def get_version(conn: Conn, name: str, version: int) -> dict[str, Any]:
    row = conn.execute("SELECT * FROM tool_versions WHERE tool_name = %s AND version = %s",
                       (name, version)).fetchone()
    if row is None:
        raise VersionNotFound(name, version)
    return row


def list_versions(conn: Conn, name: str) -> list[dict[str, Any]]:
    return conn.execute(
        "SELECT version, sha256, author, status, created_at FROM tool_versions WHERE tool_name = %s "
        "ORDER BY version", (name,)).fetchall()


def record_event(conn: Conn, name: str, version: int | None, kind: str, **details: Any) -> None:
    conn.execute("INSERT INTO tool_events (tool_name, version, kind, details) VALUES (%s, %s, %s, %s)",
                 (name, version, kind, Jsonb(details)))


def list_events(conn: Conn, name: str | None = None, kind: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
    return conn.execute(
        "SELECT id, tool_name, version, kind, details, created_at FROM tool_events "
        "WHERE (%s::text IS NULL OR tool_name = %s) AND (%s::text IS NULL OR kind = %s) ORDER BY id DESC LIMIT %s",
        (name, name, kind, kind, limit)).fetchall()


def note_outcome(conn: Conn, name: str, version: int, ok: bool, error: dict[str, Any] | None = None) -> None:
    """Count consecutive failures of a runtime tool; mark it (and that version) broken past BROKEN_AFTER."""
    if ok:
        conn.execute("UPDATE tools SET consecutive_failures = 0 WHERE name = %s AND consecutive_failures > 0",
                     (name,))
        return
    record_event(conn, name, version, "ToolExecutionFailed",
                 type=(error or {}).get("type"), message=(error or {}).get("message"))
    row = conn.execute("UPDATE tools SET consecutive_failures = consecutive_failures + 1 WHERE name = %s "
                       "RETURNING consecutive_failures, status, version", (name,)).fetchone()
    if row and row["consecutive_failures"] >= BROKEN_AFTER and row["status"] != "broken" and row["version"] == version:
        conn.execute("UPDATE tools SET status = 'broken' WHERE name = %s", (name,))
        conn.execute("UPDATE tool_versions SET status = 'broken' WHERE tool_name = %s AND version = %s",
                     (name, version))
        record_event(conn, name, version, "ToolMarkedBroken", failures=row["consecutive_failures"],
                     last_error=(error or {}).get("message"))


def broken_tools(conn: Conn) -> list[dict[str, Any]]:
    return conn.execute(
        """
        SELECT t.name, t.version, t.consecutive_failures,
               (SELECT details FROM tool_events e WHERE e.tool_name = t.name
                 AND e.kind IN ('ToolExecutionFailed', 'ToolLoadFailed') ORDER BY id DESC LIMIT 1) AS last_error
        FROM tools t WHERE t.status = 'broken' ORDER BY t.name
        """).fetchall()
