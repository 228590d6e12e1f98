"""`web_search`: search the web through a SearxNG-compatible JSON endpoint (SEARXNG_URL)."""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import Field

from executables._http import fetch
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class SearchParams(Params):
    query: str = Field(min_length=1, max_length=1000)
    limit: int = Field(default=10, ge=1, le=100)
    categories: str | None = Field(default=None, description="SearxNG categories, e.g. general,news")
    language: str | None = None


TOOL = ToolSpec("web_search", "Search the web (SearxNG-compatible JSON API at SEARXNG_URL)", "browser",
                actions={"search": SearchParams}, requires_env=["SEARXNG_URL"], weight=0.7, time_limit_s=60)


def _search(p: SearchParams) -> dict[str, Any]:
    params: dict[str, Any] = {"q": p.query, "format": "json"}
    if p.categories:
        params["categories"] = p.categories
    if p.language:
        params["language"] = p.language
    base = os.environ["SEARXNG_URL"].rstrip("/")
    response, body = fetch(f"{base}/search", timeout_s=30, max_bytes=10_000_000, params=params)
    if response.status_code >= 400:
        raise ExecutableError(f"the search backend answered HTTP {response.status_code}")
    try:
        data = json.loads(body)
    except ValueError:
        raise ExecutableError("the search backend did not answer JSON; is format=json enabled on it?") from None
    results = [{"title": r.get("title"), "url": r.get("url"), "content": r.get("content"),
                "engine": r.get("engine")} for r in data.get("results", [])[: p.limit]]
    return {"query": p.query, "results": results}


run = TOOL.dispatcher({"search": _search})
