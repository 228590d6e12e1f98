"""FastAPI dependencies as `Annotated` aliases."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from celery import Celery
from fastapi import Depends, Request

from api.embedder import EmbedderHolder
from api.notify import ExecutionWaiter
from registry.db import Conn
from toolfleet.settings import Settings

__all__ = ["AuthorDep", "KeyDep", "CeleryDep", "DbDep", "EmbedderDep", "SettingsDep", "WaiterDep"]


def _db(request: Request) -> Iterator[Conn]:
    with request.app.state.pool.connection() as conn:
        yield conn


def _celery(request: Request) -> Celery:
    return request.app.state.celery


def _settings(request: Request) -> Settings:
    return request.app.state.settings


def _waiter(request: Request) -> ExecutionWaiter:
    return request.app.state.waiter


def _embedder(request: Request) -> EmbedderHolder:
    return request.app.state.embedder


def _author(request: Request) -> str:
    """Who made a change: the API key's name when auth is on, else X-Toolfleet-Author."""
    key = getattr(request.state, "api_key", None)
    if key:
        return f"key:{key['name']}"
    return request.headers.get("x-toolfleet-author", "anonymous")[:200]


def _key(request: Request) -> dict[str, Any] | None:
    return getattr(request.state, "api_key", None)


DbDep = Annotated[Conn, Depends(_db)]
CeleryDep = Annotated[Celery, Depends(_celery)]
SettingsDep = Annotated[Settings, Depends(_settings)]
WaiterDep = Annotated[ExecutionWaiter, Depends(_waiter)]
EmbedderDep = Annotated[EmbedderHolder, Depends(_embedder)]
AuthorDep = Annotated[str, Depends(_author)]
KeyDep = Annotated[dict[str, Any] | None, Depends(_key)]
