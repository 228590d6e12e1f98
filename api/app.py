"""The FastAPI application factory: `uvicorn --factory api.app:create_app`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from api.auth import auth_enabled, auth_middleware
from api.embedder import EmbedderHolder
from api.errors import install_error_handlers
from api.limits import install_body_limit
from api.metrics import install_metrics
from api.notify import ExecutionWaiter
from api.routers import dashboard, discovery, executions, keys, plans, queues, tools, workers
from registry.db import make_pool
from toolfleet.services import database_url
from toolfleet.settings import Settings, get_settings
from workers.app import create_app as create_celery

__all__ = ["create_app"]


def create_app(settings: Settings | None = None) -> FastAPI:
    s = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        url = database_url(s)
        app.state.settings = s
        app.state.pool = make_pool(url, max_size=20)
        app.state.pool.open(wait=True, timeout=10)
        app.state.celery = create_celery(s)
        app.state.waiter = ExecutionWaiter(url)
        app.state.embedder = EmbedderHolder()
        if s.preload_embedder:
            app.state.embedder.start()
        await app.state.waiter.start()
        try:
            yield
        finally:
            await app.state.waiter.stop()
            app.state.pool.close()

    app = FastAPI(
        title="toolfleet",
        version="0.1.0",
        summary="Run tools for AI agents on Celery workers across many hosts; every execution recorded in Postgres.",
        lifespan=lifespan,
    )
    app.state.auth_required = auth_enabled(s.auth, s.api_host)
    app.middleware("http")(auth_middleware)
    install_error_handlers(app)
    install_metrics(app)
    install_body_limit(app, s.max_request_bytes)
    app.include_router(dashboard.router)
    app.mount("/static", StaticFiles(directory=dashboard.STATIC), name="static")
    app.include_router(discovery.router)
    app.include_router(tools.router)
    app.include_router(executions.router)
    app.include_router(workers.router)
    app.include_router(queues.router)
    app.include_router(plans.router)
    app.include_router(keys.router)
    return app
