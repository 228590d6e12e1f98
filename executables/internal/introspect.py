"""`introspect`: what toolfleet has and whether it is healthy, as seen from a worker."""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from registry.db import connect
from registry.definitions import Params, ToolSpec
from registry.tools import get_tool, list_tools
from registry.workers import availability, list_workers
from toolfleet.errors import ToolfleetError
from toolfleet.services import broker_url, check_broker, redact


class ListToolsParams(Params):
    category: str | None = Field(default=None, description="only tools of this category")


class DescribeParams(Params):
    name: str = Field(description="the tool to describe")


class HealthParams(Params):
    pass


TOOL = ToolSpec(
    "introspect",
    "Introspection: list the registered tools, describe one tool, check database, broker and worker health",
    "internal",
    actions={"list_tools": ListToolsParams, "describe": DescribeParams, "health": HealthParams},
    weight=0.3,
    time_limit_s=15,
)


def _list_tools(p: ListToolsParams) -> list[dict[str, Any]]:
    with connect() as conn:
        live = list_workers(conn)
        out = []
        for tool in list_tools(conn, p.category):
            avail = availability(tool, live)
            out.append({"name": tool.name, "category": tool.category, "description": tool.description,
                        "actions": tool.actions, "enabled": tool.enabled, "available": avail.available})
        return out


def _describe(p: DescribeParams) -> dict[str, Any]:
    with connect() as conn:
        tool = get_tool(conn, p.name)
        avail = availability(tool, list_workers(conn))
    return {**tool.model_dump(), "available": avail.available, "hosts": avail.hosts,
            "missing_env": avail.missing_env}


def _health(_: HealthParams) -> dict[str, Any]:
    started = time.monotonic()
    with connect() as conn:
        conn.execute("SELECT 1")
        db_ms = (time.monotonic() - started) * 1000
        workers = list_workers(conn)
    broker: dict[str, Any] = {"url": redact(broker_url())}
    try:
        check_broker()
        broker["ok"] = True
    except ToolfleetError as exc:
        broker.update(ok=False, error=str(exc))
    return {
        "database": {"ok": True, "latency_ms": round(db_ms, 2)},
        "broker": broker,
        "workers": [{"name": w["name"], "host": w["host"], "category": w["category"], "queues": w["queues"]}
                    for w in workers],
        "categories_served": sorted({w["category"] for w in workers}),
    }


run = TOOL.dispatcher({"list_tools": _list_tools, "describe": _describe, "health": _health})
