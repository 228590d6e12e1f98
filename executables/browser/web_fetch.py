"""`web_fetch`: HTTP GET a page and extract its readable text (trafilatura), title and links."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

import trafilatura
from lxml import html as lxml_html
from pydantic import Field, HttpUrl

from executables._http import fetch
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class FetchParams(Params):
    url: HttpUrl
    timeout_s: float = Field(default=20, gt=0, le=120)
    max_bytes: int = Field(default=5_000_000, ge=1000, le=50_000_000)
    include_links: bool = True
    include_html: bool = False
    max_chars: int = Field(default=100_000, ge=100, le=5_000_000)


TOOL = ToolSpec(
    "web_fetch",
    "Fetch a web page over HTTP and extract its readable main text, title and links (no browser needed)",
    "browser",
    actions={"fetch": FetchParams},
    weight=0.7,
    time_limit_s=150,
)


def _fetch(p: FetchParams) -> dict[str, Any]:
    url = str(p.url)
    response, body = fetch(url, timeout_s=p.timeout_s, max_bytes=p.max_bytes)
    if response.status_code >= 400:
        raise ExecutableError(f"{url} answered HTTP {response.status_code}")
    content_type = response.headers.get("content-type", "")
    text_body = body.decode(response.encoding or "utf-8", "replace")
    final_url = str(response.url)
    out: dict[str, Any] = {"url": url, "final_url": final_url, "status": response.status_code,
                           "content_type": content_type}
    if "html" not in content_type and not text_body.lstrip().startswith("<"):
        out.update(title=None, text=text_body[: p.max_chars], links=[])
        return out
    main = trafilatura.extract(text_body, url=final_url, include_comments=False, favor_recall=True) or ""
    doc = lxml_html.fromstring(text_body or "<html></html>")
    title = (doc.findtext(".//title") or "").strip() or None
    if not main:
        main = " ".join(doc.text_content().split())
    out.update(title=title, text=main[: p.max_chars], truncated=len(main) > p.max_chars)
    if p.include_links:
        seen: set[str] = set()
        links = []
        for a in doc.iterfind(".//a[@href]"):
            href = urljoin(final_url, a.get("href", ""))
            if href.startswith(("http://", "https://")) and href not in seen:
                seen.add(href)
                links.append({"text": " ".join(a.text_content().split()), "href": href})
        out["links"] = links
    if p.include_html:
        out["html"] = text_body[: p.max_chars]
    return out


run = TOOL.dispatcher({"fetch": _fetch})
