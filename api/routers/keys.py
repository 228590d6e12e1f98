"""`/api/keys`: API keys (admin scope). A key is shown once, when it is created."""

from __future__ import annotations

from typing import Any, Literal

import psycopg
from fastapi import APIRouter, HTTPException, Response
from pydantic import BaseModel, ConfigDict, Field

from api.deps import DbDep
from registry.keys import create_key, list_keys, revoke_key

__all__ = ["router"]

router = APIRouter(prefix="/api/keys", tags=["keys"])


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[\w.-]{1,100}$")
    scopes: list[Literal["read", "execute", "admin"]] = Field(min_length=1)
    categories: list[str] | None = Field(default=None, description="only tools of these categories")
    tools: list[str] | None = Field(default=None, description="only these tools")


def _view(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}


@router.post("", status_code=201, summary="Create a key; the response is the only time it is shown")
def create(body: KeyCreate, conn: DbDep) -> dict[str, Any]:
    try:
        key, row = create_key(conn, name=body.name, scopes=list(body.scopes), categories=body.categories,
                              tools=body.tools)
    except psycopg.errors.UniqueViolation:
        raise HTTPException(409, f"a key named {body.name!r} exists") from None
    return {**_view(row), "key": key}


@router.get("", summary="Keys (never their secrets)")
def list_(conn: DbDep) -> dict[str, Any]:
    return {"keys": [_view(r) for r in list_keys(conn)]}


@router.delete("/{name}", status_code=204, summary="Revoke a key")
def revoke(name: str, conn: DbDep) -> Response:
    if not revoke_key(conn, name):
        raise HTTPException(404, f"no active key named {name!r}")
    return Response(status_code=204)
