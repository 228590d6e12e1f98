"""The `artifacts` table: files an execution produced (screenshots, downloads)."""

from __future__ import annotations

import uuid
from typing import Any

from registry.db import Conn
from toolfleet.errors import ExecutionNotFound

__all__ = ["list_artifacts", "get_artifact"]


def list_artifacts(conn: Conn, execution_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT name, content_type, size, created_at FROM artifacts WHERE execution_id = %s ORDER BY created_at",
        (uuid.UUID(execution_id),),
    ).fetchall()
    return [{**r, "created_at": r["created_at"].isoformat(),
             "url": f"/api/executions/{execution_id}/artifacts/{r['name']}"} for r in rows]


def get_artifact(conn: Conn, execution_id: str, name: str) -> dict[str, Any]:
    row = conn.execute("SELECT content_type, data FROM artifacts WHERE execution_id = %s AND name = %s",
                       (uuid.UUID(execution_id), name)).fetchone()
    if row is None:
        raise ExecutionNotFound(f"{execution_id}/artifacts/{name}")
    return row
