"""API keys: random tokens shown once, stored as sha256 hashes, with scopes and optional restrictions
to categories or tools."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from registry.db import Conn

__all__ = ["SCOPES", "create_key", "find_key", "list_keys", "revoke_key", "implied"]

SCOPES = ("read", "execute", "admin")


def implied(scopes: list[str]) -> set[str]:
    """admin implies execute and read; execute implies read."""
    out = set(scopes)
    if "admin" in out:
        out |= {"execute", "read"}
    if "execute" in out:
        out.add("read")
    return out


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(conn: Conn, *, name: str, scopes: list[str], categories: list[str] | None = None,
               tools: list[str] | None = None) -> tuple[str, dict[str, Any]]:
    """Answers (the key, shown only now; its stored row)."""
    bad = sorted(set(scopes) - set(SCOPES))
    if bad or not scopes:
        raise ValueError(f"scopes must be among {', '.join(SCOPES)}; got {scopes}")
    key = "tfk_" + secrets.token_urlsafe(32)
    row = conn.execute(
        "INSERT INTO api_keys (name, key_hash, prefix, scopes, categories, tools) VALUES (%s, %s, %s, %s, %s, %s) "
        "RETURNING id, name, prefix, scopes, categories, tools, created_at",
        (name, _hash(key), key[:10], scopes, categories, tools)).fetchone()
    assert row is not None
    return key, row


def find_key(conn: Conn, key: str) -> dict[str, Any] | None:
    row = conn.execute(
        "UPDATE api_keys SET last_used = now() WHERE key_hash = %s AND revoked_at IS NULL "
        "RETURNING id, name, prefix, scopes, categories, tools", (_hash(key),)).fetchone()
    return row


def list_keys(conn: Conn) -> list[dict[str, Any]]:
    return conn.execute("SELECT id, name, prefix, scopes, categories, tools, created_at, last_used, revoked_at "
                        "FROM api_keys ORDER BY id").fetchall()


def revoke_key(conn: Conn, name: str) -> bool:
    return conn.execute("UPDATE api_keys SET revoked_at = now() WHERE name = %s AND revoked_at IS NULL",
                        (name,)).rowcount == 1
