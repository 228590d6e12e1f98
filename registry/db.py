"""Postgres connections for the registry: plain psycopg 3, dict rows, JSON adapted."""

from __future__ import annotations

import psycopg
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool

from toolfleet.errors import ServiceUnavailable
from toolfleet.services import database_url, redact

__all__ = ["Conn", "connect", "make_pool"]

Conn = psycopg.Connection[DictRow]


def connect(url: str | None = None, *, autocommit: bool = True, timeout: int = 5) -> Conn:
    """One connection; raises ServiceUnavailable naming the fix when Postgres is down."""
    url = url or database_url()
    try:
        return psycopg.connect(url, autocommit=autocommit, row_factory=dict_row, connect_timeout=timeout)
    except psycopg.OperationalError as exc:
        raise ServiceUnavailable(
            f"Postgres not reachable at {redact(url)} ({str(exc).strip().splitlines()[0]}); "
            "set DATABASE_URL or run `toolfleet up`"
        ) from exc


def make_pool(url: str | None = None, *, min_size: int = 1, max_size: int = 10) -> ConnectionPool[Conn]:
    url = url or database_url()
    return ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": 5},
        open=False,
        name="toolfleet",
    )
