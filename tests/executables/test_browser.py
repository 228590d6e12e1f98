"""browser and web tools on a real `browser` worker: real Chromium, a page served by the test."""

from __future__ import annotations

import httpx

from tests.executables.conftest import run
from tests.executables.fakeweb import FakeWeb


def test_navigate_answers_url_and_title(tf: httpx.Client, web: FakeWeb) -> None:
    rec = run(tf, "browser", "navigate", {"url": f"{web.url}/"})
    assert rec["status"] == "succeeded", rec
    assert rec["output"]["url"] == f"{web.url}/" and rec["output"]["title"] == "Fake Shop"
    assert rec["worker"].endswith("@browserhost")


def test_a_session_shares_one_page_across_steps_and_screenshots_are_served(tf: httpx.Client, web: FakeWeb) -> None:
    s = {"session": "shop"}
    assert run(tf, "browser", "navigate", {"url": f"{web.url}/", **s}, target="browserhost")["status"] == "succeeded"
    typed = run(tf, "browser", "type", {"selector": "#q", "text": "blue widget", "delay_ms": 5, **s})
    assert typed["status"] == "succeeded", typed
    assert run(tf, "browser", "click", {"selector": "#go", **s})["status"] == "succeeded"
    waited = run(tf, "browser", "wait_for", {"selector": "text=searched: blue widget", **s})
    assert waited["status"] == "succeeded", waited
    content = run(tf, "browser", "get_content", {**s})["output"]
    assert "searched: blue widget" in content["text"] and content["title"] == "Fake Shop"
    links = run(tf, "browser", "get_links", {**s})["output"]["links"]
    assert {"text": "Pricing", "href": f"{web.url}/pricing"} in links
    click = run(tf, "browser", "click", {"selector": "text=Pricing", **s})["output"]
    assert click["title"] == "Pricing - Fake Shop"
    shot = run(tf, "browser", "screenshot", {**s})
    artifact = shot["output"]["artifact"]
    assert artifact["url"] == f"/api/executions/{shot['id']}/artifacts/screenshot.png"
    png = tf.get(artifact["url"])
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(b"\x89PNG") and len(png.content) == artifact["bytes"] > 1000
    assert "PNG" not in str(shot["output"]) and len(str(shot["output"])) < 500  # no base64 in the record
    listed = tf.get(f"/api/executions/{shot['id']}/artifacts").json()["artifacts"]
    assert [a["name"] for a in listed] == ["screenshot.png"]
    assert run(tf, "browser", "press", {"key": "Tab", **s})["status"] == "succeeded"
    assert run(tf, "browser", "close_session", {**s})["status"] == "succeeded"
    gone = run(tf, "browser", "get_content", {**s})
    assert gone["status"] == "failed" and "unknown session 'shop'" in gone["error"]["message"]


def test_a_page_that_never_loads_times_out_and_the_worker_keeps_serving(tf: httpx.Client, web: FakeWeb) -> None:
    rec = run(tf, "browser", "navigate", {"url": f"{web.url}/never", "timeout_s": 2})
    assert rec["status"] == "timed_out", rec
    assert "Timeout" in rec["error"]["message"]
    assert run(tf, "browser", "navigate", {"url": f"{web.url}/pricing"})["output"]["title"] == "Pricing - Fake Shop"


def test_profile_keeps_cookies_between_sessions(tf: httpx.Client, web: FakeWeb) -> None:
    run(tf, "browser", "navigate", {"url": f"{web.url}/setcookie", "session": "p1", "profile": "alice"})
    run(tf, "browser", "close_session", {"session": "p1"})
    run(tf, "browser", "navigate", {"url": f"{web.url}/whoami", "session": "p2", "profile": "alice"})
    text = run(tf, "browser", "get_content", {"session": "p2"})["output"]["text"]
    assert "visitor=alice" in text
    run(tf, "browser", "close_session", {"session": "p2"})
    fresh = run(tf, "browser", "get_content", {"url": f"{web.url}/whoami"})["output"]["text"]
    assert "cookie: none" in fresh


def test_unknown_session_fails_clearly(tf: httpx.Client) -> None:
    rec = run(tf, "browser", "click", {"selector": "#x", "session": "ghost"})
    assert rec["status"] == "failed" and "unknown session 'ghost'" in rec["error"]["message"]
    assert "target" in rec["error"]["message"]


def test_web_fetch_extracts_text_title_and_links(tf: httpx.Client, web: FakeWeb) -> None:
    out = run(tf, "web_fetch", "fetch", {"url": f"{web.url}/"})["output"]
    assert out["title"] == "Fake Shop" and "finest imaginary widgets" in out["text"]
    assert {"text": "Pricing", "href": f"{web.url}/pricing"} in out["links"]
    slow = run(tf, "web_fetch", "fetch", {"url": f"{web.url}/never", "timeout_s": 1})
    assert slow["status"] == "timed_out"


def test_web_search_through_a_searxng_endpoint(tf: httpx.Client, web: FakeWeb) -> None:
    out = run(tf, "web_search", "search", {"query": "widgets", "limit": 5})["output"]
    assert out["results"] == [{"title": "Widget facts", "url": "http://example.org/w",
                               "content": "All about widgets", "engine": "fake"}]
    assert web.received("/search")[-1]["query"] == {"q": ["widgets"], "format": ["json"]}
