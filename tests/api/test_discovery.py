"""Discovery over HTTP: hybrid ranking, its parts, filters, prompt context, and every bad input."""

from __future__ import annotations

import httpx

from tests.conftest import ApiProc


def _names(body: dict) -> list[str]:
    return [r["name"] for r in body["results"]]


def test_discover_finds_the_right_tools_with_score_parts(client: httpx.Client) -> None:
    body = client.get("/api/form/discover", params={"q": "take a screenshot of a web page", "k": 3}).json()
    assert body["mode"] == "hybrid" and body["warning"] is None
    assert _names(body)[0] == "browser", body
    top = body["results"][0]
    assert set(top["parts"]) >= {"text_rank", "vector_rank", "weight", "success_rate", "rrf"}
    assert top["parts"]["vector_rank"] is not None and top["score"] > 0
    assert body["timing_ms"]["embed"] >= 0 and body["timing_ms"]["db"] > 0

    assert _names(client.get("/api/form/discover", params={"q": "run a shell command"}).json())[0] == "terminal"
    assert "memory_linking" in _names(client.get("/api/form/discover", params={
        "q": "connect two concepts in a knowledge graph"}).json())[:3]
    assert "feed_rss" in _names(client.get("/api/form/discover", params={"q": "new posts in an rss feed"}).json())[:2]


def test_discover_filters_by_category_and_availability(client: httpx.Client) -> None:
    only = client.get("/api/form/discover", params={"q": "read a file", "category": "memory", "k": 10}).json()
    assert only["results"] and {r["category"] for r in only["results"]} == {"memory"}
    avail = client.get("/api/form/discover", params={"q": "check a secret token", "available_only": True,
                                                     "k": 50}).json()
    assert all(r["available"] for r in avail["results"])


def test_track_record_moves_tools(client: httpx.Client) -> None:
    for _ in range(3):
        client.post("/api/form/tools/diag/execute?wait=10", json={"action": "fail", "params": {}})
    body = client.get("/api/form/discover", params={"q": "diagnostics echo sleep fail", "k": 5}).json()
    diag = [r for r in body["results"] if r["name"] == "diag"][0]
    assert diag["parts"]["executions"] >= 3 and diag["parts"]["success_rate"] < 1.0


def test_discover_bad_input(client: httpx.Client) -> None:
    for q in ("", "   "):
        r = client.get("/api/form/discover", params={"q": q})
        assert r.status_code == 422 and "must not be empty" in r.json()["detail"]
    assert client.get("/api/form/discover").status_code == 422
    for k in (0, 51, "many"):
        assert client.get("/api/form/discover", params={"q": "x", "k": k}).status_code == 422
    bad = client.get("/api/form/discover", params={"q": "x", "category": "kitchen"})
    assert bad.status_code == 422 and "internal" in bad.json()["detail"] and "kitchen" in bad.json()["detail"]
    for q in ("напиши файл на диск", "%%% &&& ||| !!! ::", "'; DROP TABLE tools; --", "ü" * 900):
        r = client.get("/api/form/discover", params={"q": q})
        assert r.status_code == 200, (q, r.text)
        assert isinstance(r.json()["results"], list)
    assert client.get("/api/form/tools/terminal").status_code == 200


def test_context_levels(client: httpx.Client) -> None:
    l1 = client.get("/api/form/context", params={"level": 1}).json()
    assert "- terminal [terminal]" in l1["text"] and "# Running now" in l1["text"]
    assert "description" not in l1["tools"][0]
    l2 = client.get("/api/form/context", params={"level": 2, "q": "run a shell command", "k": 2}).json()
    assert l2["tools"][0]["name"] == "terminal" and "params" in l2["tools"][0]
    assert "command: " in l2["text"] and "timeout_s?: number" in l2["text"]
    l3 = client.get("/api/form/context", params={"level": 3, "q": "run a shell command", "k": 1,
                                                 "format": "text"})
    assert l3.headers["content-type"].startswith("text/plain")
    assert "def _run(p: RunParams)" in l3.text
    assert client.get("/api/form/context", params={"level": 4}).status_code == 422


def test_discovery_falls_back_to_full_text_when_the_model_cannot_load(start_api) -> None:  # type: ignore[no-untyped-def]
    api: ApiProc = start_api({"TOOLFLEET_EMBEDDING_MODEL": "/nonexistent/model"})
    with api.client() as c:
        body = c.get("/api/form/discover", params={"q": "run a shell command"}).json()
        assert body["mode"] == "fulltext" and "full-text" in body["warning"]
        assert body["results"][0]["name"] == "terminal"
        assert body["results"][0]["parts"]["vector_rank"] is None
