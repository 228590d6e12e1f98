"""`/api/form/discover` and `/api/form/context`: which tools fit a goal, and prompt-ready context."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import PlainTextResponse, Response

from api.deps import DbDep, EmbedderDep
from api.source import module_source
from registry.definitions import ToolDefinition
from registry.discovery import search
from registry.tools import categories, get_tool, list_tools
from registry.workers import availability, list_workers

__all__ = ["router"]

router = APIRouter(prefix="/api/form", tags=["discovery"])


def _clean_query(q: str) -> str:
    q = q.strip()
    if not q:
        raise HTTPException(422, "q must not be empty: describe the goal, e.g. q=take a screenshot of a web page")
    if len(q) > 1000:
        raise HTTPException(422, "q is too long: at most 1000 characters")
    return q


def _check_category(conn: Any, category: str | None) -> None:
    if category is None:
        return
    known = [c["category"] for c in categories(conn)]
    if category not in known:
        raise HTTPException(422, f"unknown category {category!r}; categories: {', '.join(known)}")


@router.get("/discover", summary="Tools that fit a goal: hybrid full-text + vector search, ranked by fit and record")
def discover(
    conn: DbDep,
    embedder: EmbedderDep,
    q: str = Query(description="the goal, in words"),
    k: int = Query(default=5, ge=1, le=50),
    category: str | None = None,
    available_only: bool = Query(default=False, description="only tools a live worker can run now"),
) -> dict[str, Any]:
    query = _clean_query(q)
    _check_category(conn, category)
    result = search(conn, query, k=50 if available_only else k, category=category, embedder=embedder.get())
    hits = result.hits
    live = list_workers(conn)
    out = []
    for hit in hits:
        avail = availability(ToolDefinition(name=hit.name, category=hit.category, actions=hit.actions,
                                            run_file="x.py", requires_env=hit.requires_env, enabled=hit.enabled),
                             live)
        if available_only and not avail.available:
            continue
        out.append({**hit.as_dict(), "available": avail.available, "missing_env": avail.missing_env})
    return {"query": query, "mode": result.mode, "warning": result.warning, "results": out[:k],
            "timing_ms": {"embed": round(result.embed_ms, 2), "db": round(result.db_ms, 2)}}


def _param_lines(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    lines = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or "|".join(str(x.get("type", "?")) for x in prop.get("anyOf", [])) or "any"
        desc = f" — {prop['description']}" if prop.get("description") else ""
        lines.append(f"{name}{'' if name in required else '?'}: {kind}{desc}")
    return lines


@router.get("/context", response_model=None,
            summary="Prompt context: L1 names + running now, L2 + descriptions and schemas, L3 + source")
def context(
    conn: DbDep,
    embedder: EmbedderDep,
    level: int = Query(default=1, ge=1, le=3, description="1 names, 2 + descriptions and schemas, 3 + source"),
    q: str | None = Query(default=None, description="only the tools that fit this goal"),
    k: int = Query(default=10, ge=1, le=50),
    format: Literal["json", "text"] = "json",
) -> Response | dict[str, Any]:
    if q is not None:
        query = _clean_query(q)
        names = [h.name for h in search(conn, query, k=k, embedder=embedder.get()).hits]
        tools = [get_tool(conn, n) for n in names]
    else:
        tools = [t for t in list_tools(conn) if t.enabled]
    running = conn.execute(
        "SELECT tool_name, action, worker, started_at FROM executions WHERE status = 'running' "
        "ORDER BY started_at LIMIT 50").fetchall()
    live = list_workers(conn)
    items: list[dict[str, Any]] = []
    lines = ["# Tools"]
    for tool in tools:
        avail = availability(tool, live)
        item: dict[str, Any] = {"name": tool.name, "category": tool.category, "actions": tool.actions,
                                "available": avail.available}
        lines.append(f"- {tool.name} [{tool.category}]{'' if avail.available else ' (unavailable)'}: "
                     f"{', '.join(tool.actions)}")
        if level >= 2:
            item["description"] = tool.description
            item["params"] = {a: tool.schema_for(a) for a in tool.actions}
            lines.append(f"  {tool.description}")
            for action in tool.actions:
                lines.append(f"  * {action}({', '.join(_param_lines(tool.schema_for(action)))})")
        if level >= 3:
            item["source"] = module_source(tool.module)
            if item["source"]:
                lines.append(f"  source of {tool.module}:\n```python\n{item['source']}```")
        items.append(item)
    lines.append("# Running now")
    lines.extend(f"- {r['tool_name']}.{r['action']} on {r['worker']} since {r['started_at']:%H:%M:%S}"
                 for r in running)
    if not running:
        lines.append("- nothing")
    text = "\n".join(lines) + "\n"
    if format == "text":
        return PlainTextResponse(text)
    return {"level": level, "query": q, "tools": items,
            "running": [{**r, "started_at": r["started_at"].isoformat()} for r in running], "text": text}
