"""A local HTTP server speaking the formats the tools consume: pages, RSS/Atom, webhooks, GitHub, OpenAI, SearxNG."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE = """<!doctype html><html><head><title>Fake Shop</title></head><body>
<nav><a href="/pricing">Pricing</a> <a href="https://example.org/about">About us</a></nav>
<main><h1>Welcome to Fake Shop</h1>
<p>We sell the finest imaginary widgets. Our widgets are hand-made by careful people who love widgets.</p>
<p>Every widget ships with a lifetime guarantee and a small card saying thank you.</p>
<input id="q" name="q"><button id="go" onclick="document.getElementById('out').innerText =
  'searched: ' + document.getElementById('q').value">Search</button>
<div id="out"></div></main></body></html>"""

PRICING = """<!doctype html><html><head><title>Pricing - Fake Shop</title></head><body>
<h1>Pricing</h1><p>Basic widget: 10 euros. Deluxe widget: 25 euros.</p><a href="/">Home</a></body></html>"""

RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Widget News</title><link>http://example.org/</link>
<description>News about widgets</description>
{items}
</channel></rss>"""

RSS_ITEM = """<item><title>{title}</title><link>http://example.org/{guid}</link><guid>{guid}</guid>
<pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate><description>About {title}</description></item>"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom Widgets</title><link href="http://example.org/"/>
<updated>2026-11-01T10:00:00Z</updated><id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
<entry><title>Atom entry one</title><link href="http://example.org/a1"/><id>urn:a1</id>
<updated>2026-11-01T10:00:00Z</updated><summary>First</summary></entry></feed>"""


class FakeWeb:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.rss_items = [("First post", "p1"), ("Second post", "p2")]
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> FakeWeb:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def received(self, path: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == path]

    def _routes(self) -> dict[tuple[str, str], Callable[[dict[str, Any]], Any]]:
        def html(body: str) -> Callable[[dict[str, Any]], tuple[int, str, bytes]]:
            return lambda req: (200, "text/html; charset=utf-8", body.encode())

        def rss(req: dict[str, Any]) -> tuple[int, str, bytes]:
            items = "".join(RSS_ITEM.format(title=t, guid=g) for t, g in self.rss_items)
            return 200, "application/rss+xml", RSS.format(items=items).encode()

        def never(req: dict[str, Any]) -> tuple[int, str, bytes]:
            time.sleep(120)
            return 200, "text/html", b"late"

        def json_ok(data: Any) -> Callable[[dict[str, Any]], tuple[int, str, bytes]]:
            return lambda req: (200, "application/json", json.dumps(data).encode())

        def chat(req: dict[str, Any]) -> tuple[int, str, bytes]:
            if req["headers"].get("authorization") != "Bearer test-llm-key":
                return 401, "application/json", b'{"error": {"message": "bad key"}}'
            last = req["json"]["messages"][-1]["content"]
            return 200, "application/json", json.dumps({
                "id": "chatcmpl-1", "object": "chat.completion", "model": req["json"]["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": f"echo: {last}"}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}).encode()

        def github(kind: str) -> Callable[[dict[str, Any]], tuple[int, str, bytes]]:
            def handler(req: dict[str, Any]) -> tuple[int, str, bytes]:
                if req["headers"].get("authorization") != "Bearer gh-test-token":
                    return 401, "application/json", b'{"message": "Bad credentials"}'
                user = {"login": "octocat", "id": 1}
                data: Any
                if kind == "issues":
                    data = [{"number": 7, "title": "Widgets break", "state": "open", "user": user, "labels":
                             [{"name": "bug"}], "comments": 2, "html_url": "https://github.com/o/r/issues/7",
                             "updated_at": "2026-11-01T00:00:00Z"},
                            {"number": 8, "title": "A PR listed as issue", "state": "open", "user": user,
                             "labels": [], "pull_request": {"url": "x"}, "html_url": "h"}]
                elif kind == "pulls":
                    data = [{"number": 9, "title": "Fix widgets", "state": "open", "user": user, "draft": False,
                             "html_url": "https://github.com/o/r/pull/9", "updated_at": "2026-11-02T00:00:00Z"}]
                else:
                    data = [{"id": "1", "reason": "mention", "unread": True, "updated_at": "2026-11-03T00:00:00Z",
                             "subject": {"title": "Widgets break", "type": "Issue"},
                             "repository": {"full_name": "o/r"}}]
                return 200, "application/json", json.dumps(data).encode()
            return handler

        return {
            ("GET", "/"): html(PAGE),
            ("GET", "/pricing"): html(PRICING),
            ("GET", "/rss"): rss,
            ("GET", "/atom"): lambda req: (200, "application/atom+xml", ATOM.encode()),
            ("GET", "/not-a-feed"): lambda req: (200, "application/json", b'{"hello": "world"}'),
            ("GET", "/never"): never,
            ("GET", "/setcookie"): lambda req: (200, "text/html", b"<title>cookie set</title>ok",
                                                {"set-cookie": "visitor=alice; Max-Age=3600; Path=/"}),
            ("GET", "/whoami"): lambda req: (200, "text/html", (
                "<title>whoami</title><body>cookie: " + req["headers"].get("cookie", "none") + "</body>").encode()),
            ("GET", "/big"): lambda req: (200, "text/plain", b"x" * 3_000_000),
            ("POST", "/slack"): lambda req: (200, "text/plain", b"ok"),
            ("POST", "/hook"): json_ok({"received": True}),
            ("POST", "/hook500"): lambda req: (500, "text/plain", b"internal kaboom"),
            ("POST", "/v1/chat/completions"): chat,
            ("GET", "/search"): json_ok({"query": "widgets", "results": [
                {"title": "Widget facts", "url": "http://example.org/w", "content": "All about widgets",
                 "engine": "fake"}]}),
            ("GET", "/gh/repos/o/r/issues"): github("issues"),
            ("GET", "/gh/repos/o/r/pulls"): github("pulls"),
            ("GET", "/gh/notifications"): github("notifications"),
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        web = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                req = {"method": method, "path": parts.path, "query": parse_qs(parts.query),
                       "headers": {k.lower(): v for k, v in self.headers.items()}, "body": raw,
                       "json": json.loads(raw) if raw and "json" in self.headers.get("content-type", "") else None}
                web.requests.append(req)
                route = web._routes().get((method, parts.path))
                answer = route(req) if route else (404, "text/plain", b"not found")
                status, ctype, body = answer[:3]
                try:
                    self.send_response(status)
                    for name, value in (answer[3] if len(answer) > 3 else {}).items():  # type: ignore[misc]
                        self.send_header(name, value)
                    self.send_header("content-type", ctype)
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:  # noqa: N802
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

        return Handler
