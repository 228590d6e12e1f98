"""`/api/workers` and `/api/health`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api.deps import DbDep
from registry.workers import list_workers

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["workers"])


def _iso(value: Any) -> Any:
    return value.isoformat() if value is not None else None


@router.get("/workers", summary="Workers seen by heartbeat: host, queues, env names present (never values)")
def get_workers(conn: DbDep, include_dead: bool = False) -> dict[str, Any]:
    rows = list_workers(conn, include_dead=include_dead)
    return {"workers": [{**r, "started_at": _iso(r["started_at"]), "last_seen": _iso(r["last_seen"]),
                         "stopped_at": _iso(r["stopped_at"])} for r in rows]}


@router.get("/health", summary="Is the API up and can it reach Postgres")
def health(conn: DbDep) -> dict[str, Any]:
    conn.execute("SELECT 1")
    return {"status": "ok", "database": "ok", "workers": len(list_workers(conn))}
