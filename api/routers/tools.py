"""`/api/form/tools`: the registry, and executing a tool."""

from __future__ import annotations

import time
from typing import Any

import psycopg
from fastapi import APIRouter, Header, HTTPException, Query, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from api.deps import AuthorDep, CeleryDep, DbDep, EmbedderDep, KeyDep, WaiterDep
from api.metrics import SUBMISSIONS
from api.schemas import ExecuteRequest, Rollback, ToolCreate, ToolUpdate
from api.source import module_path, module_source
from registry.definitions import ToolDefinition
from registry.discovery import refresh_search
from registry.executions import TERMINAL, get_execution, to_seed_shape
from registry.forge import broken_tools, get_version, list_events, list_versions
from registry.tools import categories, delete_tool, get_tool, list_tools, upsert_tool
from registry.workers import availability, list_workers
from workers import forge
from workers.dispatch import submit

__all__ = ["router"]

router = APIRouter(prefix="/api/form", tags=["tools"])


def _tool_view(tool: ToolDefinition, live: list[dict[str, Any]]) -> dict[str, Any]:
    avail = availability(tool, live)
    return {
        **tool.model_dump(),
        "available": avail.available,
        "availability": "green" if avail.available else "red",
        "hosts": avail.hosts,
        "missing_env": avail.missing_env,
        "unavailable_reason": avail.reason or None,
    }


@router.get("/tools", summary="All registered tools with their availability; `failed` lists broken runtime tools")
def get_tools(conn: DbDep, category: str | None = None) -> dict[str, Any]:
    live = list_workers(conn)
    failed = [{**r, "last_error": r["last_error"]} for r in broken_tools(conn)]
    return {"tools": [_tool_view(t, live) for t in list_tools(conn, category)], "failed": failed}


@router.get("/categories", summary="Categories (one Celery queue each) with tool and worker counts")
def get_categories(conn: DbDep) -> dict[str, Any]:
    live = list_workers(conn)
    out = []
    for row in categories(conn):
        workers = [w for w in live if w["category"] == row["category"]]
        out.append({"category": row["category"], "queue": row["category"], "tools": row["tools"],
                    "enabled": row["enabled"], "workers": len(workers),
                    "hosts": sorted({w["host"] for w in workers})})
    return {"categories": out}


@router.get("/tools/{name}", summary="One tool: definition, availability and code")
def get_one(name: str, conn: DbDep) -> dict[str, Any]:
    tool = get_tool(conn, name)
    return {**_tool_view(tool, list_workers(conn)), "code": _source(conn, tool)}


@router.get("/tools/{name}/code", summary="The executable's source")
def get_code(name: str, conn: DbDep) -> dict[str, Any]:
    tool = get_tool(conn, name)
    return {"name": tool.name, "module": tool.module, "run_file": tool.run_file, "version": tool.version,
            "code": _source(conn, tool)}


def _source(conn: Any, tool: ToolDefinition) -> str | None:
    if tool.run_type == "sandboxed":
        return str(get_version(conn, tool.name, tool.version)["source"])
    return module_source(tool.module) if tool.module else None


@router.post("/tools", status_code=201, summary="Register a definition for an existing executable module")
def create_tool(body: ToolCreate, conn: DbDep, embedder: EmbedderDep, author: AuthorDep) -> dict[str, Any]:
    if body.code is not None:
        data = body.model_dump(exclude={"code", "module", "run_file"})
        stored = forge.create_runtime_tool(conn, ToolDefinition(**data, run_file=f"{body.name}.py"), body.code,
                                           author)
        refresh_search(conn, [stored], embedder.get())
        return _tool_view(stored, list_workers(conn))
    if body.run_file is None:
        raise HTTPException(422, "give `code` (a runtime tool) or `run_file` (an existing executable module)")
    module = body.module or f"executables.{body.category}.{body.run_file.removesuffix('.py')}"
    if module_path(module) is None:
        raise HTTPException(422, f"no executable module {module!r} on this server; built-in modules live under "
                                 "executables/<category>/<run_file>. Set `module` to an existing one")
    unknown = sorted(set(body.params_schemas) - set(body.actions))
    if unknown:
        raise HTTPException(422, f"params_schemas names actions not in `actions`: {', '.join(unknown)}")
    data = body.model_dump(exclude={"code"})
    data.update(module=module, builtin=False, version=1)
    definition = ToolDefinition(**data)
    try:
        with conn.transaction():
            if conn.execute("SELECT 1 FROM tools WHERE name = %s FOR UPDATE", (body.name,)).fetchone():
                raise HTTPException(409, f"a tool named {body.name!r} exists; change it with PUT /api/form/tools/"
                                         f"{body.name}")
            stored = upsert_tool(conn, definition)
            refresh_search(conn, [stored], embedder.get())
    except psycopg.errors.UniqueViolation:
        raise HTTPException(409, f"a tool named {body.name!r} exists") from None
    return _tool_view(stored, list_workers(conn))


@router.put("/tools/{name}", summary="Change a tool's definition (makes a new version)")
def update_tool(name: str, body: ToolUpdate, conn: DbDep, embedder: EmbedderDep, author: AuthorDep) -> dict[str, Any]:
    current = get_tool(conn, name)
    if current.run_type == "sandboxed" or body.code is not None:
        stored = forge.new_version(conn, name, body.model_dump(exclude_none=True, exclude={"code"}), body.code,
                                   author)
        refresh_search(conn, [stored], embedder.get())
        return _tool_view(stored, list_workers(conn))
    with conn.transaction():
        current = get_tool(conn, name)
        changes = body.model_dump(exclude_none=True)
        try:
            updated = ToolDefinition(**{**current.model_dump(), **changes})
        except ValidationError as exc:
            raise HTTPException(422, f"invalid tool definition: {exc.errors(include_url=False)}") from None
        unknown = sorted(set(updated.params_schemas) - set(updated.actions))
        if unknown:
            raise HTTPException(422, f"params_schemas names actions not in `actions`: {', '.join(unknown)}")
        stored = upsert_tool(conn, updated, bump_version=True)
        refresh_search(conn, [stored], embedder.get())
    return _tool_view(stored, list_workers(conn))


@router.get("/tools/{name}/versions", summary="A runtime tool's versions (newest last)")
def versions(name: str, conn: DbDep) -> dict[str, Any]:
    tool = get_tool(conn, name)
    rows = list_versions(conn, name)
    return {"name": name, "active": tool.version, "versions": [
        {**r, "created_at": r["created_at"].isoformat(), "active": r["version"] == tool.version} for r in rows]}


@router.get("/tools/{name}/versions/{version}", summary="One version's source and definition")
def version(name: str, version: int, conn: DbDep) -> dict[str, Any]:
    get_tool(conn, name)
    row = get_version(conn, name, version)
    return {**row, "created_at": row["created_at"].isoformat()}


@router.post("/tools/{name}/rollback", summary="Make an earlier version active again")
def rollback(name: str, body: Rollback, conn: DbDep, embedder: EmbedderDep, author: AuthorDep) -> dict[str, Any]:
    stored = forge.rollback(conn, name, body.version, author)
    refresh_search(conn, [stored], embedder.get())
    return _tool_view(stored, list_workers(conn))


@router.get("/tools/{name}/events", summary="ToolCreated, ToolUpdated, ToolLoadFailed, ToolExecutionFailed, ...")
def tool_events(name: str, conn: DbDep, limit: int = Query(default=100, ge=1, le=1000)) -> dict[str, Any]:
    return {"events": [{**e, "created_at": e["created_at"].isoformat()} for e in list_events(conn, name, None, limit)]}


@router.delete("/tools/{name}", status_code=204, summary="Remove a tool from the registry")
def remove_tool(name: str, conn: DbDep) -> Response:
    delete_tool(conn, name)
    return Response(status_code=204)


@router.post(
    "/tools/{name}/execute",
    status_code=202,
    summary="Queue an execution; with ?wait=SECONDS answer the finished result when it is done in time",
)
async def execute(
    name: str,
    body: ExecuteRequest,
    celery: CeleryDep,
    waiter: WaiterDep,
    conn: DbDep,
    key: KeyDep,
    wait: float | None = Query(default=None, ge=0, le=300, description="seconds to wait for the result"),
    idempotency_key: str | None = Header(default=None, max_length=200,
                                         description="a retried request with the same key answers the same execution"),
) -> JSONResponse:
    row = await run_in_threadpool(submit, conn, celery, tool_name=name, action=body.action, params=body.params,
                                  target=body.target, idempotency_key=body.idempotency_key or idempotency_key,
                                  key=key)
    execution_id = str(row["id"])
    SUBMISSIONS.labels(row["tool_name"], row["action"]).inc()
    if wait:
        deadline = time.monotonic() + wait
        async with waiter.watch(execution_id) as event:
            while True:
                row = await run_in_threadpool(get_execution, conn, execution_id)
                if row["status"] in TERMINAL:
                    return JSONResponse(to_seed_shape(row), status_code=200)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                await waiter.sleep(event, remaining)
    return JSONResponse(
        {"execution_id": execution_id, "status": row["status"], "tool_name": row["tool_name"],
         "action": row["action"], "queue": row["queue"], "url": f"/api/executions/{execution_id}"},
        status_code=202,
    )
