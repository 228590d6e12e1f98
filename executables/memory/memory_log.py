"""`memory_log`: an append-only event log, searchable by time, type, text and meaning (pgvector)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb
from pydantic import Field

from registry.definitions import Params, ToolSpec
from registry.embeddings import get_embedder, to_pgvector
from workers.executor import worker_connection


class AppendParams(Params):
    type: str = Field(min_length=1, max_length=100, description="e.g. observation, decision, error")
    content: str = Field(min_length=1, max_length=100_000)
    importance: float = Field(default=0.5, ge=0, le=1)
    context: dict[str, Any] = Field(default_factory=dict)


class QueryParams(Params):
    since: datetime | None = None
    until: datetime | None = None
    type: str | None = None
    text: str | None = Field(default=None, description="full-text match on the content")
    similar_to: str | None = Field(default=None, description="rank by meaning (embedding cosine similarity)")
    min_importance: float | None = Field(default=None, ge=0, le=1)
    limit: int = Field(default=20, ge=1, le=1000)


TOOL = ToolSpec(
    "memory_log",
    "Agent memory event log: append events (type, content, importance, context) and recall them by time range, "
    "type, text or semantic similarity",
    "memory",
    actions={"append": AppendParams, "query": QueryParams},
    weight=0.7,
    time_limit_s=60,
    idempotent=False,  # appending twice duplicates the event
)


def _append(p: AppendParams) -> dict[str, Any]:
    vector = to_pgvector(get_embedder().embed([p.content])[0])
    row = worker_connection().execute(
        "INSERT INTO memory_events (type, content, importance, context, embedding) VALUES (%s, %s, %s, %s, %s) "
        "RETURNING id, created_at", (p.type, p.content, p.importance, Jsonb(p.context), vector)).fetchone()
    assert row is not None
    return {"id": row["id"], "created_at": row["created_at"].isoformat()}


def _query(p: QueryParams) -> dict[str, Any]:
    where: list[str] = ["true"]
    args: list[Any] = []
    for clause, value in (("created_at >= %s", p.since), ("created_at <= %s", p.until), ("type = %s", p.type),
                          ("importance >= %s", p.min_importance)):
        if value is not None:
            where.append(clause)
            args.append(value)
    if p.text:
        where.append("tsv @@ websearch_to_tsquery('simple', %s)")
        args.append(p.text)
    select = "id, type, content, importance, context, created_at"
    if p.similar_to:
        vector = to_pgvector(get_embedder().embed([p.similar_to])[0])
        sql = (f"SELECT {select}, 1 - (embedding <=> %s::vector) AS similarity FROM memory_events "
               f"WHERE {' AND '.join(where)} ORDER BY embedding <=> %s::vector LIMIT %s")
        args = [vector, *args, vector, p.limit]
    else:
        sql = f"SELECT {select} FROM memory_events WHERE {' AND '.join(where)} ORDER BY created_at DESC LIMIT %s"
        args.append(p.limit)
    rows = worker_connection().execute(sql, args).fetchall()
    events = []
    for r in rows:
        event = {**r, "created_at": r["created_at"].isoformat()}
        if "similarity" in event:
            event["similarity"] = round(float(event["similarity"]), 4)
        events.append(event)
    return {"events": events}


run = TOOL.dispatcher({"append": _append, "query": _query})
