"""The auth matrix: every scope against every kind of endpoint, restricted keys, public paths."""

from __future__ import annotations

import httpx
import pytest

from registry.db import connect
from registry.keys import create_key, revoke_key
from tests.conftest import ApiProc

ENDPOINTS = [
    ("GET", "/api/form/tools", None, "read"),
    ("GET", "/api/form/tools/diag", None, "read"),
    ("GET", "/api/executions", None, "read"),
    ("GET", "/api/workers", None, "read"),
    ("GET", "/api/queues", None, "read"),
    ("GET", "/api/form/discover?q=echo", None, "read"),
    ("GET", "/api/form/context", None, "read"),
    ("GET", "/api/plans", None, "read"),
    ("GET", "/metrics", None, "read"),
    ("POST", "/api/form/tools/diag/execute", {"action": "echo"}, "execute"),
    ("POST", "/api/plans", {"blocks": [{"primitive_block": [{"diag": "echo"}]}]}, "execute"),
    ("POST", "/api/executions/00000000-0000-0000-0000-000000000000/cancel", None, "execute"),
    ("POST", "/api/form/tools", {"name": "authprobe", "category": "internal", "actions": ["echo"],
                                 "run_file": "diag.py"}, "admin"),
    ("PUT", "/api/form/tools/diag", {"weight": 0.1}, "admin"),
    ("DELETE", "/api/form/tools/no_such_tool", None, "admin"),
    ("POST", "/api/form/tools/diag/rollback", {"version": 1}, "admin"),
    ("GET", "/api/keys", None, "admin"),
    ("POST", "/api/keys", {"name": "made-by-admin", "scopes": ["read"]}, "admin"),
]
PUBLIC = ["/", "/docs", "/openapi.json", "/api/health", "/static/app.js"]
RANK = {"read": 1, "execute": 2, "admin": 3}


@pytest.fixture(scope="module")
def secured(start_api, stack, internal_worker) -> tuple[ApiProc, dict[str, str]]:  # type: ignore[no-untyped-def]
    api = start_api({"TOOLFLEET_AUTH": "required"})
    keys = {}
    with connect(stack.database_url) as conn:
        for scope in RANK:
            keys[scope], _ = create_key(conn, name=f"matrix-{scope}", scopes=[scope])
        keys["memory_only"], _ = create_key(conn, name="matrix-memory", scopes=["execute"], categories=["memory"])
        keys["revoked"], _ = create_key(conn, name="matrix-revoked", scopes=["admin"])
        revoke_key(conn, "matrix-revoked")
    return api, keys


def _call(api: ApiProc, method: str, path: str, body: object, key: str | None) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.request(method, api.url + path, json=body, headers=headers, timeout=30)


@pytest.mark.parametrize(("method", "path", "body", "needed"), ENDPOINTS, ids=[f"{m} {p}" for m, p, _, _ in ENDPOINTS])
def test_scope_matrix(secured, method: str, path: str, body: object, needed: str) -> None:  # type: ignore[no-untyped-def]
    api, keys = secured
    for who in ("none", "garbage", "revoked"):
        key = {"none": None, "garbage": "tfk_not-a-key", "revoked": keys["revoked"]}[who]
        r = _call(api, method, path, body, key)
        assert r.status_code == 401, (who, r.status_code, r.text)
        assert r.headers.get("www-authenticate") == "Bearer"
    for scope, rank in RANK.items():
        r = _call(api, method, path, body, keys[scope])
        if rank >= RANK[needed]:
            assert r.status_code not in (401, 403), (scope, r.status_code, r.text)
        else:
            assert r.status_code == 403, (scope, r.status_code, r.text)
            assert f"needs {needed}" in r.json()["detail"]


def test_public_paths_need_no_key(secured) -> None:  # type: ignore[no-untyped-def]
    api, _ = secured
    for path in PUBLIC:
        assert httpx.get(api.url + path, timeout=10).status_code == 200, path


def test_keys_limited_to_a_category(secured) -> None:  # type: ignore[no-untyped-def]
    api, keys = secured
    refused = _call(api, "POST", "/api/form/tools/diag/execute", {"action": "echo"}, keys["memory_only"])
    assert refused.status_code == 403 and "categories memory, not 'internal'" in refused.json()["detail"]
    plan = _call(api, "POST", "/api/plans", {"blocks": [{"primitive_block": [{"diag": "echo"}]}]}, keys["memory_only"])
    assert plan.status_code == 403 and "block 0 step 0" in plan.json()["detail"]
    allowed = _call(api, "POST", "/api/form/tools/memory_identity/execute",
                    {"action": "list", "params": {}}, keys["memory_only"])
    assert allowed.status_code == 202


def test_keys_api_shows_a_key_once_and_never_its_hash(secured) -> None:  # type: ignore[no-untyped-def]
    api, keys = secured
    made = _call(api, "POST", "/api/keys", {"name": "shown-once", "scopes": ["read"]}, keys["admin"]).json()
    assert made["key"].startswith("tfk_")
    listed = _call(api, "GET", "/api/keys", None, keys["admin"])
    assert made["key"] not in listed.text and "key_hash" not in listed.text
    assert _call(api, "GET", "/api/form/tools", None, made["key"]).status_code == 200
    assert _call(api, "DELETE", "/api/keys/shown-once", None, keys["admin"]).status_code == 204
    assert _call(api, "GET", "/api/form/tools", None, made["key"]).status_code == 401


def test_auth_is_off_on_loopback_by_default_and_on_beyond_it() -> None:
    from api.auth import auth_enabled

    assert auth_enabled("auto", "127.0.0.1") is False
    assert auth_enabled("auto", "0.0.0.0") is True
    assert auth_enabled("required", "127.0.0.1") is True
    assert auth_enabled("disabled", "0.0.0.0") is False
