"""`/api/executions`: execution records, read from Postgres."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Response

from api.deps import CeleryDep, DbDep
from registry.artifacts import get_artifact, list_artifacts
from registry.executions import cancel_execution, get_execution, list_executions, to_record

__all__ = ["router"]

router = APIRouter(prefix="/api/executions", tags=["executions"])

Status = Literal["queued", "running", "succeeded", "failed", "timed_out", "cancelled"]


@router.get("", summary="Executions, newest first; page with `cursor`")
def get_executions(
    conn: DbDep,
    tool: str | None = None,
    status: Status | None = None,
    limit: int = Query(default=50, ge=1, le=500),
    cursor: str | None = Query(default=None, description="`next_cursor` from the previous page"),
) -> dict[str, Any]:
    rows, next_cursor = list_executions(conn, tool=tool, status=status, limit=limit, cursor=cursor)
    return {"executions": [to_record(r) for r in rows], "next_cursor": next_cursor}


@router.get("/{execution_id}", summary="One execution record")
def get_one(execution_id: str, conn: DbDep) -> dict[str, Any]:
    return to_record(get_execution(conn, execution_id))


@router.post("/{execution_id}/cancel", summary="Cancel a queued execution, or stop a running one")
def cancel(execution_id: str, conn: DbDep, celery: CeleryDep) -> dict[str, Any]:
    current = get_execution(conn, execution_id)
    row = cancel_execution(conn, str(current["id"]))
    if row is None:
        raise HTTPException(409, f"execution {execution_id} already ended ({current['status']}); nothing to cancel")
    # a queued message is skipped; a running tool gets SIGUSR1 in its pool process, which stops it the way a
    # soft time limit does (subprocesses it started are killed with it)
    celery.control.revoke(str(row["id"]), terminate=current["status"] == "running", signal="SIGUSR1")
    return to_record(row)


@router.get("/{execution_id}/artifacts", summary="Files the execution produced")
def get_artifacts(execution_id: str, conn: DbDep) -> dict[str, Any]:
    get_execution(conn, execution_id)
    return {"artifacts": list_artifacts(conn, execution_id)}


@router.get("/{execution_id}/artifacts/{name}", summary="One artifact's bytes (e.g. a screenshot PNG)")
def get_artifact_bytes(execution_id: str, name: str, conn: DbDep) -> Response:
    get_execution(conn, execution_id)
    row = get_artifact(conn, execution_id, name)
    return Response(content=bytes(row["data"]), media_type=row["content_type"])
