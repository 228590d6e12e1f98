"""`memory_philosophy`: principles and constraints, and a check of an intended action against them."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError
from workers.executor import worker_connection


class AddParams(Params):
    kind: Literal["principle", "constraint"]
    text: str = Field(min_length=1, max_length=2000, description="the rule in words")
    patterns: list[str] = Field(default_factory=list, description="regular expressions an action matches")
    effect: Literal["allow", "deny"] = "deny"
    reason: str = Field(default="", max_length=2000)

    @field_validator("patterns")
    @classmethod
    def _compile(cls, values: list[str]) -> list[str]:
        for v in values:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"pattern {v!r} is not a valid regular expression: {exc}") from None
        return values


class RemoveParams(Params):
    id: int


class ListParams(Params):
    kind: Literal["principle", "constraint"] | None = None


class CheckParams(Params):
    action: str = Field(min_length=1, max_length=10_000, description="what the agent intends to do, in words")


TOOL = ToolSpec(
    "memory_philosophy",
    "Agent principles and constraints: add, list and remove rules, and check an intended action against them "
    "(allowed or denied, with the matching rules and reasons)",
    "memory",
    actions={"add": AddParams, "remove": RemoveParams, "list": ListParams, "check": CheckParams},
    weight=0.6,
    time_limit_s=30,
)

_COLS = "id, kind, text, patterns, effect, reason"


def _add(p: AddParams) -> dict[str, Any]:
    row = worker_connection().execute(
        f"INSERT INTO memory_principles (kind, text, patterns, effect, reason) VALUES (%s, %s, %s, %s, %s) "
        f"RETURNING {_COLS}", (p.kind, p.text, p.patterns, p.effect, p.reason)).fetchone()
    assert row is not None
    return row


def _remove(p: RemoveParams) -> dict[str, Any]:
    if not worker_connection().execute("DELETE FROM memory_principles WHERE id = %s", (p.id,)).rowcount:
        raise ExecutableError(f"no rule with id {p.id}")
    return {"removed": p.id}


def _list(p: ListParams) -> dict[str, Any]:
    rows = worker_connection().execute(
        f"SELECT {_COLS} FROM memory_principles WHERE %s::text IS NULL OR kind = %s ORDER BY id",
        (p.kind, p.kind)).fetchall()
    return {"rules": rows}


def _check(p: CheckParams) -> dict[str, Any]:
    """Denied when any matching rule denies (deny wins over allow); allowed otherwise."""
    rules = worker_connection().execute(f"SELECT {_COLS} FROM memory_principles ORDER BY id").fetchall()
    matched = []
    for rule in rules:
        hits = [pat for pat in rule["patterns"] if re.search(pat, p.action, re.IGNORECASE)]
        if hits:
            matched.append({**rule, "matched_patterns": hits})
    denials = [m for m in matched if m["effect"] == "deny"]
    return {
        "action": p.action,
        "allowed": not denials,
        "decision": "denied" if denials else "allowed",
        "matched": matched,
        "reasons": [m["reason"] or m["text"] for m in (denials or matched)],
    }


run = TOOL.dispatcher({"add": _add, "remove": _remove, "list": _list, "check": _check})
