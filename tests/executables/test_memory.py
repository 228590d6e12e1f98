"""memory tools on a real `memory` worker: Postgres tables, pgvector similarity, the DAG."""

from __future__ import annotations

import httpx

from tests.executables.conftest import run


def test_memory_log_append_and_query_by_type_text_and_meaning(tf: httpx.Client) -> None:
    events = [("observation", "The user prefers dark roast coffee in the morning", 0.8),
              ("decision", "Chose PostgreSQL over MongoDB for the invoices service", 0.9),
              ("observation", "The cat knocked a glass off the kitchen table", 0.2)]
    for kind, content, importance in events:
        rec = run(tf, "memory_log", "append", {"type": kind, "content": content, "importance": importance,
                                              "context": {"source": "test"}}, wait=120)
        assert rec["status"] == "succeeded", rec
        assert rec["worker"].endswith("@memhost")
    by_type = run(tf, "memory_log", "query", {"type": "decision"})["output"]["events"]
    assert [e["content"] for e in by_type] == ["Chose PostgreSQL over MongoDB for the invoices service"]
    by_text = run(tf, "memory_log", "query", {"text": "glass"})["output"]["events"]
    assert len(by_text) == 1 and "cat" in by_text[0]["content"]
    similar = run(tf, "memory_log", "query", {"similar_to": "which database did we pick?", "limit": 3})
    ranked = similar["output"]["events"]
    assert ranked[0]["content"].startswith("Chose PostgreSQL"), ranked
    assert ranked[0]["similarity"] > ranked[-1]["similarity"]
    important = run(tf, "memory_log", "query", {"min_importance": 0.85})["output"]["events"]
    assert [e["type"] for e in important] == ["decision"]


def test_memory_identity_crud(tf: httpx.Client) -> None:
    set_ = run(tf, "memory_identity", "set", {"key": "user.name", "value": "Ada", "source": "intro chat"})
    assert set_["output"]["value"] == "Ada" and set_["output"]["source"] == "intro chat"
    run(tf, "memory_identity", "set", {"key": "user.langs", "value": ["en", "fr"]})
    assert run(tf, "memory_identity", "get", {"key": "user.name"})["output"]["value"] == "Ada"
    keys = [f["key"] for f in run(tf, "memory_identity", "list", {"prefix": "user."})["output"]["facts"]]
    assert keys == ["user.langs", "user.name"]
    assert run(tf, "memory_identity", "delete", {"key": "user.name"})["status"] == "succeeded"
    gone = run(tf, "memory_identity", "get", {"key": "user.name"})
    assert gone["status"] == "failed" and "no identity fact" in gone["error"]["message"]


def test_memory_linking_dag_refuses_cycles(tf: httpx.Client) -> None:
    for name in ("science", "physics", "math", "mechanics"):
        run(tf, "memory_linking", "add_node", {"name": name})
    run(tf, "memory_linking", "add_node", {"name": "old-idea", "status": "archived"})
    for parent, child in [("science", "physics"), ("math", "mechanics"), ("physics", "mechanics")]:
        assert run(tf, "memory_linking", "link", {"parent": parent, "child": child})["status"] == "succeeded"
    cycle = run(tf, "memory_linking", "link", {"parent": "mechanics", "child": "science"})
    assert cycle["status"] == "failed" and "would create a cycle" in cycle["error"]["message"]
    self_link = run(tf, "memory_linking", "link", {"parent": "math", "child": "math"})
    assert self_link["status"] == "failed"
    assert run(tf, "memory_linking", "parents", {"name": "mechanics"})["output"]["nodes"] == ["math", "physics"]
    assert run(tf, "memory_linking", "ancestors", {"name": "mechanics"})["output"]["nodes"] == [
        "math", "physics", "science"]
    assert run(tf, "memory_linking", "descendants", {"name": "science"})["output"]["nodes"] == [
        "mechanics", "physics"]
    roots = run(tf, "memory_linking", "roots")["output"]["nodes"]
    assert {"science", "math", "old-idea"} <= set(roots) and "physics" not in roots
    assert "mechanics" in run(tf, "memory_linking", "leaves")["output"]["nodes"]
    assert run(tf, "memory_linking", "by_status", {"status": "archived"})["output"]["nodes"] == ["old-idea"]
    text = run(tf, "memory_linking", "to_context", {"root": "science"})["output"]["text"]
    assert text == "- science\n  - physics\n    - mechanics"
    run(tf, "memory_linking", "unlink", {"parent": "physics", "child": "mechanics"})
    assert run(tf, "memory_linking", "parents", {"name": "mechanics"})["output"]["nodes"] == ["math"]
    unknown = run(tf, "memory_linking", "link", {"parent": "nope", "child": "math"})
    assert unknown["status"] == "failed" and "no node named 'nope'" in unknown["error"]["message"]


def test_memory_philosophy_check(tf: httpx.Client) -> None:
    run(tf, "memory_philosophy", "add", {"kind": "constraint", "text": "Never delete production data",
                                         "patterns": [r"\b(drop|delete|truncate)\b.*\bprod"], "effect": "deny",
                                         "reason": "production data is irreplaceable"})
    run(tf, "memory_philosophy", "add", {"kind": "principle", "text": "Prefer reading before writing",
                                         "patterns": [r"\bread\b"], "effect": "allow"})
    denied = run(tf, "memory_philosophy", "check", {"action": "DROP table users on prod-db"})["output"]
    assert denied["allowed"] is False and denied["decision"] == "denied"
    assert denied["reasons"] == ["production data is irreplaceable"]
    assert denied["matched"][0]["text"] == "Never delete production data"
    allowed = run(tf, "memory_philosophy", "check", {"action": "read the staging logs"})["output"]
    assert allowed["allowed"] is True and allowed["matched"][0]["effect"] == "allow"
    rules = run(tf, "memory_philosophy", "list", {"kind": "constraint"})["output"]["rules"]
    assert len(rules) >= 1 and all(r["kind"] == "constraint" for r in rules)
    bad = tf.post("/api/form/tools/memory_philosophy/execute", json={"action": "add", "params": {
        "kind": "rule", "text": "x"}})
    assert bad.status_code == 422
