"""feeds tools on a real `feeds` worker against a local server speaking RSS/Atom, Slack, GitHub JSON."""

from __future__ import annotations

import httpx

from tests.conftest import free_port, wait_terminal
from tests.executables.conftest import run
from tests.executables.fakeweb import FakeWeb


def test_rss_poll_returns_only_new_items(tf: httpx.Client, web: FakeWeb) -> None:
    url = f"{web.url}/rss"
    run(tf, "feed_rss", "reset", {"url": url})
    first = run(tf, "feed_rss", "poll", {"url": url})
    assert first["status"] == "succeeded", first
    assert first["output"]["feed"]["title"] == "Widget News" and first["output"]["feed"]["format"] == "rss20"
    assert [i["title"] for i in first["output"]["new_items"]] == ["First post", "Second post"]
    assert first["worker"].endswith("@feedhost")
    again = run(tf, "feed_rss", "poll", {"url": url})["output"]
    assert again["new_items"] == [] and again["seen_before"] == 2
    web.rss_items.append(("Third post", "p3"))
    third = run(tf, "feed_rss", "poll", {"url": url})["output"]
    assert [i["title"] for i in third["new_items"]] == ["Third post"]


def test_atom_fetch(tf: httpx.Client, web: FakeWeb) -> None:
    out = run(tf, "feed_rss", "fetch", {"url": f"{web.url}/atom"})["output"]
    assert out["feed"]["title"] == "Atom Widgets" and out["items"][0]["id"] == "urn:a1"


def test_bad_feeds_fail_clearly(tf: httpx.Client, web: FakeWeb) -> None:
    invalid = run(tf, "feed_rss", "fetch", {"url": f"{web.url}/not-a-feed"})
    assert invalid["status"] == "failed" and "not a valid RSS or Atom document" in invalid["error"]["message"]
    r = tf.post("/api/form/tools/feed_rss/execute", json={"action": "fetch", "params": {
        "url": f"http://127.0.0.1:{free_port()}/feed"}})
    unreachable = wait_terminal(tf, r.json()["execution_id"], timeout=60)  # a refused connection is retried first
    assert unreachable["status"] == "failed" and "could not fetch" in unreachable["error"]["message"]
    assert unreachable["retries"] == 3 and unreachable["error"]["type"] == "RetryableError"
    missing = run(tf, "feed_rss", "fetch", {"url": f"{web.url}/nothing-here"})
    assert missing["status"] == "failed" and "HTTP 404" in missing["error"]["message"]
    slow = run(tf, "feed_rss", "fetch", {"url": f"{web.url}/never", "timeout_s": 1})
    assert slow["status"] == "timed_out" and "did not answer within 1s" in slow["error"]["message"]
    big = run(tf, "feed_rss", "fetch", {"url": f"{web.url}/big", "max_bytes": 100_000})
    assert big["status"] == "failed" and "max_bytes" in big["error"]["message"]
    assert run(tf, "feed_rss", "fetch", {"url": f"{web.url}/atom"})["status"] == "succeeded"


def test_notify_posts_the_slack_body(tf: httpx.Client, web: FakeWeb) -> None:
    rec = run(tf, "notify", "slack", {"text": "deploy finished :tada:", "username": "toolfleet"})
    assert rec["status"] == "succeeded", rec
    assert web.received("/slack")[-1]["json"] == {"text": "deploy finished :tada:", "username": "toolfleet"}


def test_webhook_posts_json_and_reports_a_500(tf: httpx.Client, web: FakeWeb) -> None:
    ok = run(tf, "webhook", "post", {"url": f"{web.url}/hook", "payload": {"event": "done", "n": 3}})
    assert ok["output"] == {"status": 200, "response": {"received": True}}
    assert web.received("/hook")[-1]["json"] == {"event": "done", "n": 3}
    failed = run(tf, "webhook", "post", {"url": f"{web.url}/hook500", "payload": {}})
    assert failed["status"] == "failed"
    assert "HTTP 500" in failed["error"]["message"] and "internal kaboom" in failed["error"]["message"]


def test_github_issues_pulls_and_notifications(tf: httpx.Client, web: FakeWeb) -> None:
    issues = run(tf, "feed_github", "issues", {"repo": "o/r"})["output"]["issues"]
    assert issues == [{"number": 7, "title": "Widgets break", "state": "open",
                       "url": "https://github.com/o/r/issues/7", "author": "octocat", "labels": ["bug"],
                       "comments": 2, "updated_at": "2026-11-01T00:00:00Z"}]
    assert web.received("/gh/repos/o/r/issues")[-1]["query"] == {"state": ["open"], "per_page": ["30"]}
    pulls = run(tf, "feed_github", "pull_requests", {"repo": "o/r", "state": "all"})["output"]["pull_requests"]
    assert pulls[0]["number"] == 9 and pulls[0]["author"] == "octocat"
    notes = run(tf, "feed_github", "notifications")["output"]["notifications"]
    assert notes[0]["title"] == "Widgets break" and notes[0]["repo"] == "o/r"


def test_tools_needing_env_are_unavailable_where_it_is_missing(tf: httpx.Client) -> None:
    tools = {t["name"]: t for t in tf.get("/api/form/tools").json()["tools"]}
    assert tools["notify"]["available"] is True and tools["notify"]["hosts"] == ["feedhost"]
    assert tools["feed_github"]["requires_env"] == ["GITHUB_TOKEN"]
    workers = tf.get("/api/workers").text
    assert "gh-test-token" not in workers and "test-llm-key" not in workers
