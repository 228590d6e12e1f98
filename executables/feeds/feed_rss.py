"""`feed_rss`: fetch and parse RSS/Atom feeds; `poll` answers only the items not seen before."""

from __future__ import annotations

import hashlib
from typing import Any

import feedparser
from pydantic import Field, HttpUrl

from executables._http import fetch
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError
from workers.executor import worker_connection


class FeedParams(Params):
    url: HttpUrl
    timeout_s: float = Field(default=20, gt=0, le=120)
    max_bytes: int = Field(default=5_000_000, ge=1000, le=50_000_000)
    max_items: int = Field(default=50, ge=1, le=1000)


class ResetParams(Params):
    url: HttpUrl


TOOL = ToolSpec(
    "feed_rss",
    "RSS and Atom feed reader: fetch and parse a feed; poll returns only new items since the last poll",
    "feeds",
    actions={"fetch": FeedParams, "poll": FeedParams, "reset": ResetParams},
    weight=0.6,
    time_limit_s=150,
)


def _parse(p: FeedParams) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    url = str(p.url)
    response, body = fetch(url, timeout_s=p.timeout_s, max_bytes=p.max_bytes)
    if response.status_code >= 400:
        raise ExecutableError(f"feed {url} answered HTTP {response.status_code}")
    parsed = feedparser.parse(body)
    if not parsed.entries and not parsed.feed.get("title"):
        cause = parsed.get("bozo_exception")
        raise ExecutableError(f"{url} is not a valid RSS or Atom document" + (f": {cause}" if cause else ""))
    items = []
    for entry in parsed.entries[: p.max_items]:
        key = entry.get("id") or entry.get("link") or hashlib.sha256(
            (entry.get("title", "") + entry.get("summary", "")).encode()).hexdigest()
        items.append({"id": key, "title": entry.get("title"), "link": entry.get("link"),
                      "published": entry.get("published") or entry.get("updated"),
                      "summary": entry.get("summary")})
    feed = {"url": url, "title": parsed.feed.get("title"), "link": parsed.feed.get("link"),
            "format": parsed.get("version") or None}
    return feed, items


def _fetch(p: FeedParams) -> dict[str, Any]:
    feed, items = _parse(p)
    return {"feed": feed, "items": items}


def _poll(p: FeedParams) -> dict[str, Any]:
    feed, items = _parse(p)
    conn = worker_connection()
    new = []
    with conn.transaction():
        for item in items:
            inserted = conn.execute("INSERT INTO feed_seen (feed_url, item_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                                    (feed["url"], item["id"])).rowcount
            if inserted:
                new.append(item)
    return {"feed": feed, "new_items": new, "seen_before": len(items) - len(new)}


def _reset(p: ResetParams) -> dict[str, Any]:
    n = worker_connection().execute("DELETE FROM feed_seen WHERE feed_url = %s", (str(p.url),)).rowcount
    return {"url": str(p.url), "forgotten": n}


run = TOOL.dispatcher({"fetch": _fetch, "poll": _poll, "reset": _reset})
