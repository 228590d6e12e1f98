"""Which tools fit a goal: Postgres full-text rank and pgvector cosine rank, fused by reciprocal
rank fusion, then nudged by each tool's weight and its track record in the executions table.
"""

from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

from registry.db import Conn
from registry.definitions import ToolDefinition
from registry.embeddings import Embedder, to_pgvector

__all__ = ["Hit", "Discovery", "tool_text", "split_name", "refresh_search", "search", "RRF_K"]

log = logging.getLogger("toolfleet.discovery")

RRF_K = 10  # tuned on bench/discovery_quality.py: 10 beat 20, 40 and 60 on recall@5 and MRR
CANDIDATES = 100
SCAN_CAP = 500


def split_name(name: str) -> str:
    """`web_fetch`, `web.fetch`, `webFetch` -> `web fetch`."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return " ".join(re.split(r"[_.\-\s/]+", spaced)).lower().strip()


def tool_text(tool: ToolDefinition) -> tuple[str, str]:
    """(name words, everything else searchable): actions, parameter names and their descriptions."""
    parts: list[str] = []
    for action in tool.actions:
        parts.append(split_name(action))
        props = tool.schema_for(action).get("properties", {})
        for pname, prop in props.items():
            parts.append(split_name(pname))
            if isinstance(prop, dict) and prop.get("description"):
                parts.append(str(prop["description"]))
    return split_name(tool.name), ". ".join(parts)


def _embedding_input(tool: ToolDefinition, name_words: str, rest: str) -> str:
    return f"{name_words}: {tool.description}. {rest}"[:2000]


def refresh_search(conn: Conn, tools: list[ToolDefinition], embedder: Embedder | None,
                   batch: int = 256) -> None:
    """Store the searchable text and (when an embedder is given) the embedding of each tool."""
    for start in range(0, len(tools), batch):
        chunk = tools[start:start + batch]
        texts = [tool_text(t) for t in chunk]
        vectors: list[str | None] = [None] * len(chunk)
        if embedder is not None:
            embedded = embedder.embed([_embedding_input(t, n, r) for t, (n, r) in zip(chunk, texts, strict=True)])
            vectors = [to_pgvector(v) for v in embedded]
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE tools SET search_name = %s, search_text = %s, "
                "embedding = COALESCE(%s::vector, CASE WHEN %s THEN NULL ELSE embedding END) WHERE name = %s",
                [(n, r, v, embedder is not None, t.name) for t, (n, r), v in zip(chunk, texts, vectors, strict=True)],
            )


@dataclass
class Hit:
    name: str
    category: str
    description: str
    actions: list[str]
    weight: float
    requires_env: list[str]
    enabled: bool
    text_rank: int | None = None
    vector_rank: int | None = None
    text_score: float | None = None
    vector_similarity: float | None = None
    rrf: float = 0.0
    success_rate: float | None = None
    executions: int = 0
    median_duration_ms: float | None = None
    score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "category": self.category, "description": self.description, "actions": self.actions,
            "score": round(self.score, 6),
            "parts": {"text_rank": self.text_rank, "vector_rank": self.vector_rank,
                      "text_score": None if self.text_score is None else round(self.text_score, 4),
                      "vector_similarity": None if self.vector_similarity is None else round(self.vector_similarity, 4),
                      "rrf": round(self.rrf, 6), "weight": self.weight, "success_rate": self.success_rate,
                      "executions": self.executions, "median_duration_ms": self.median_duration_ms},
            **self.extra,
        }


@dataclass
class Discovery:
    query: str
    mode: str  # hybrid | fulltext | vector
    hits: list[Hit]
    embed_ms: float
    db_ms: float
    warning: str | None = None


_COLS = "name, category, description, actions, weight, requires_env, enabled"


def _filters(category: str | None, enabled_only: bool) -> tuple[str, list[Any]]:
    where, args = [], []
    if category:
        where.append("category = %s")
        args.append(category)
    if enabled_only:
        where.append("enabled")
    return (" AND " + " AND ".join(where)) if where else "", args


def _track_record(conn: Conn, names: list[str]) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        """
        SELECT tool_name,
               count(*) FILTER (WHERE status IN ('succeeded','failed','timed_out')) AS finished,
               count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)
                   FILTER (WHERE status = 'succeeded') AS median_ms
        FROM (SELECT tool_name, status, duration_ms FROM executions
              WHERE tool_name = ANY(%s) AND submitted_at > now() - interval '30 days') recent
        GROUP BY tool_name
        """, (names,)).fetchall()
    return {r["tool_name"]: r for r in rows}


def search(conn: Conn, query: str, *, k: int = 5, category: str | None = None, enabled_only: bool = True,
           embedder: Embedder | None = None, mode: str = "hybrid", use_track_record: bool = True) -> Discovery:
    """Rank tools for `query`. mode: hybrid | fulltext | vector (vector/hybrid need an embedder)."""
    warning = None
    if mode in ("hybrid", "vector") and embedder is None:
        warning = "the embedding model is not available; ranked by full-text search only"
        mode = "fulltext"
    embed_ms = 0.0
    vector: str | None = None
    if mode in ("hybrid", "vector"):
        assert embedder is not None
        started = time.perf_counter()
        vector = to_pgvector(embedder.embed([query])[0])
        embed_ms = (time.perf_counter() - started) * 1000
    extra, args = _filters(category, enabled_only)
    started = time.perf_counter()
    hits: dict[str, Hit] = {}
    if mode in ("hybrid", "fulltext"):
        for rank, row in enumerate(_fulltext(conn, query, extra, args), 1):
            hit = hits.setdefault(row["name"], _hit(row))
            hit.text_rank, hit.text_score = rank, float(row["text_score"])
    if vector is not None:
        conn.execute("SET hnsw.ef_search = 100")
        rows = conn.execute(
            f"""
            SELECT {_COLS}, 1 - (embedding <=> %s::vector) AS similarity FROM tools
            WHERE embedding IS NOT NULL {extra} ORDER BY embedding <=> %s::vector LIMIT %s
            """, (vector, *args, vector, CANDIDATES)).fetchall()
        for rank, row in enumerate(rows, 1):
            hit = hits.setdefault(row["name"], _hit(row))
            hit.vector_rank, hit.vector_similarity = rank, float(row["similarity"])
    for hit in hits.values():
        hit.rrf = sum(1.0 / (RRF_K + r) for r in (hit.text_rank, hit.vector_rank) if r is not None)
    ranked = sorted(hits.values(), key=lambda h: (-h.rrf, h.name))[: max(k * 4, 20)]
    records = _track_record(conn, [h.name for h in ranked]) if use_track_record and ranked else {}
    for hit in ranked:
        rec = records.get(hit.name)
        if rec and rec["finished"]:
            hit.executions = int(rec["finished"])
            hit.success_rate = round(int(rec["succeeded"]) / int(rec["finished"]), 4)
            hit.median_duration_ms = None if rec["median_ms"] is None else round(float(rec["median_ms"]), 1)
        hit.score = hit.rrf * _nudge(hit)
    db_ms = (time.perf_counter() - started) * 1000
    ranked.sort(key=lambda h: (-h.score, h.name))
    return Discovery(query, mode, ranked[:k], embed_ms, db_ms, warning)


def _fulltext(conn: Conn, query: str, extra: str, args: list[Any]) -> list[dict[str, Any]]:
    """Tools matching every word first, then tools matching any word; ranked by ts_rank_cd.

    Each pass ranks at most SCAN_CAP matching rows, so the cost stays bounded on large registries
    (a common word can match a large share of 100k tools); the vector side covers what this misses.
    """
    rows: list[dict[str, Any]] = []
    for op in ("&", "|"):
        seen = [r["name"] for r in rows]
        rows += conn.execute(
            f"""
            WITH q AS (SELECT NULLIF(replace(plainto_tsquery('english', %s)::text, '&', %s), '')::tsquery AS tq),
            matched AS (SELECT {_COLS}, tsv FROM tools, q WHERE q.tq IS NOT NULL AND tsv @@ q.tq {extra}
                        AND NOT (name = ANY(%s)) LIMIT {SCAN_CAP})
            SELECT {_COLS}, ts_rank_cd(tsv, q.tq, 1) AS text_score FROM matched, q
            ORDER BY text_score DESC, name LIMIT %s
            """, (query, op, *args, seen, CANDIDATES - len(rows))).fetchall()
        if len(rows) >= CANDIDATES:
            break
    return rows


def _hit(row: dict[str, Any]) -> Hit:
    return Hit(name=row["name"], category=row["category"], description=row["description"], actions=row["actions"],
               weight=float(row["weight"]), requires_env=list(row["requires_env"]), enabled=row["enabled"])


def _nudge(hit: Hit) -> float:
    """Weight and track record move a tool up or down a little; they never outrank a much better text match."""
    factor = 1.0 + 0.1 * (hit.weight - 0.5)
    if hit.executions:
        # Laplace-smoothed success rate, so one lucky run is not a perfect record
        reliability = (hit.success_rate or 0.0) * hit.executions
        smoothed = (reliability + 1) / (hit.executions + 2)
        factor *= 1.0 + 0.2 * (smoothed - 0.5)
        if hit.median_duration_ms:
            factor *= 1.0 - 0.05 * min(1.0, math.log10(1 + hit.median_duration_ms / 1000) / 2)
    return factor
