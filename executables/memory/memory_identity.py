"""`memory_identity`: profile facts, key -> value, with their source and timestamps."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb
from pydantic import Field

from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError
from workers.executor import worker_connection

_KEY = Field(min_length=1, max_length=200, pattern=r"^[\w.:-]+$", description="e.g. user.name")


class GetParams(Params):
    key: str = _KEY


class SetParams(Params):
    key: str = _KEY
    value: Any = Field(description="any JSON value")
    source: str | None = Field(default=None, max_length=500, description="where the fact came from")


class DeleteParams(Params):
    key: str = _KEY


class ListParams(Params):
    prefix: str = ""


TOOL = ToolSpec(
    "memory_identity",
    "Agent identity and profile facts: get, set, delete and list key/value facts with source and timestamps",
    "memory",
    actions={"get": GetParams, "set": SetParams, "delete": DeleteParams, "list": ListParams},
    weight=0.6,
    time_limit_s=30,
)


def _view(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "created_at": row["created_at"].isoformat(), "updated_at": row["updated_at"].isoformat()}


_COLS = "key, value, source, created_at, updated_at"


def _get(p: GetParams) -> dict[str, Any]:
    row = worker_connection().execute(f"SELECT {_COLS} FROM memory_identity WHERE key = %s", (p.key,)).fetchone()
    if row is None:
        raise ExecutableError(f"no identity fact with key {p.key!r}")
    return _view(row)


def _set(p: SetParams) -> dict[str, Any]:
    row = worker_connection().execute(
        f"""INSERT INTO memory_identity (key, value, source) VALUES (%s, %s, %s)
            ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, source = EXCLUDED.source, updated_at = now()
            RETURNING {_COLS}""", (p.key, Jsonb(p.value), p.source)).fetchone()
    assert row is not None
    return _view(row)


def _delete(p: DeleteParams) -> dict[str, Any]:
    deleted = worker_connection().execute("DELETE FROM memory_identity WHERE key = %s", (p.key,)).rowcount
    if not deleted:
        raise ExecutableError(f"no identity fact with key {p.key!r}")
    return {"deleted": p.key}


def _list(p: ListParams) -> dict[str, Any]:
    rows = worker_connection().execute(
        f"SELECT {_COLS} FROM memory_identity WHERE starts_with(key, %s) ORDER BY key", (p.prefix,)).fetchall()
    return {"facts": [_view(r) for r in rows]}


run = TOOL.dispatcher({"get": _get, "set": _set, "delete": _delete, "list": _list})
