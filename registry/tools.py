"""The `tools` table: read, register, update, delete tool definitions."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from registry.db import Conn
from registry.definitions import ToolDefinition
from toolfleet.errors import ToolNotFound

__all__ = ["get_tool", "list_tools", "upsert_tool", "delete_tool", "categories", "row_to_definition"]

_COLUMNS = ("name, description, category, actions, params_schemas, run_file, run_type, module, requires_env, "
            "weight, enabled, version, time_limit_s, builtin, body, network, memory_mb, status, idempotent, "
            "rate_limit_per_min")


def row_to_definition(row: dict[str, Any]) -> ToolDefinition:
    return ToolDefinition(**{k: row[k] for k in ToolDefinition.model_fields if k in row})


def get_tool(conn: Conn, name: str) -> ToolDefinition:
    row = conn.execute(f"SELECT {_COLUMNS} FROM tools WHERE name = %s", (name,)).fetchone()
    if row is None:
        raise ToolNotFound(name)
    return row_to_definition(row)


def list_tools(conn: Conn, category: str | None = None) -> list[ToolDefinition]:
    if category:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM tools WHERE category = %s ORDER BY name", (category,))
    else:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM tools ORDER BY category, name")
    return [row_to_definition(r) for r in rows.fetchall()]


def categories(conn: Conn) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT category, count(*) AS tools, count(*) FILTER (WHERE enabled) AS enabled "
        "FROM tools GROUP BY category ORDER BY category"
    )
    return list(rows.fetchall())


def upsert_tool(conn: Conn, tool: ToolDefinition, *, bump_version: bool = False) -> ToolDefinition:
    """Insert the definition, or replace it (keeping created_at); answers what was stored."""
    row = conn.execute(
        f"""
        INSERT INTO tools ({_COLUMNS})
        VALUES (%(name)s, %(description)s, %(category)s, %(actions)s, %(params_schemas)s, %(run_file)s,
                %(run_type)s, %(module)s, %(requires_env)s, %(weight)s, %(enabled)s, %(version)s,
                %(time_limit_s)s, %(builtin)s, %(body)s, %(network)s, %(memory_mb)s, %(status)s, %(idempotent)s,
                %(rate_limit_per_min)s)
        ON CONFLICT (name) DO UPDATE SET
            description = EXCLUDED.description, category = EXCLUDED.category, actions = EXCLUDED.actions,
            params_schemas = EXCLUDED.params_schemas, run_file = EXCLUDED.run_file,
            run_type = EXCLUDED.run_type, module = EXCLUDED.module, requires_env = EXCLUDED.requires_env,
            weight = EXCLUDED.weight, enabled = EXCLUDED.enabled, time_limit_s = EXCLUDED.time_limit_s,
            builtin = EXCLUDED.builtin, body = EXCLUDED.body, network = EXCLUDED.network,
            memory_mb = EXCLUDED.memory_mb, status = EXCLUDED.status, idempotent = EXCLUDED.idempotent,
            rate_limit_per_min = EXCLUDED.rate_limit_per_min,
            version = CASE WHEN %(bump)s THEN tools.version + 1 ELSE EXCLUDED.version END,
            updated_at = now()
        RETURNING {_COLUMNS}
        """,
        {**tool.model_dump(), "actions": Jsonb(tool.actions), "params_schemas": Jsonb(tool.params_schemas),
         "body": Jsonb(tool.body) if tool.body is not None else None, "bump": bump_version},
    ).fetchone()
    assert row is not None
    return row_to_definition(row)


def delete_tool(conn: Conn, name: str) -> None:
    if conn.execute("DELETE FROM tools WHERE name = %s", (name,)).rowcount == 0:
        raise ToolNotFound(name)
