"""Settings for every toolfleet process, read from the environment.

`DATABASE_URL` and `BROKER_URL` are the two that matter in production. When they
are unset, toolfleet uses the embedded services that `toolfleet up` starts in the
state folder. Everything else is prefixed `TOOLFLEET_`.
"""

from __future__ import annotations

import socket
from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "get_settings"]


class Settings(BaseSettings):
    """All configuration; build it with :func:`get_settings`, never at import time."""

    model_config = SettingsConfigDict(env_prefix="TOOLFLEET_", extra="ignore")

    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "TOOLFLEET_DATABASE_URL")
    )
    broker_url: str | None = Field(
        default=None, validation_alias=AliasChoices("BROKER_URL", "TOOLFLEET_BROKER_URL")
    )
    state_dir: Path = Path(".toolfleet")

    api_url: str | None = None  # where the CLI finds the API; default http://<api_host>:<api_port>
    api_key: str | None = None  # what the CLI, client and MCP server send as `Authorization: Bearer`
    api_host: str = "127.0.0.1"
    api_port: int = 8000
    flower_port: int = 5555
    flower_url: str | None = None  # where the dashboard links Flower; default http://<api_host>:<flower_port>
    embedded_pg_port: int = 15432
    embedded_redis_port: int = 16379

    hostname: str = Field(default_factory=socket.gethostname)
    heartbeat_interval_s: float = 5.0
    visibility_timeout_s: int = 3600
    publish_timeout_s: float = 5.0
    default_time_limit_s: float = 60.0
    worker_dead_after_s: float = 20.0  # a worker silent this long is dead: its running executions are recovered
    resend_after_s: float = 120.0  # a queued execution whose queue is empty this long after sending is re-sent
    max_resends: int = 3
    max_retries: int = 3  # for RetryableError, with exponential backoff and jitter
    queue_limit: int = 10_000  # queued executions per category before submissions answer 429
    queue_limits: dict[str, int] = {}  # per-category overrides, e.g. {"browser": 200}
    max_request_bytes: int = 2_000_000
    max_output_bytes: int = 10_000_000
    auth: str = "auto"  # required | disabled | auto (required unless the API listens on loopback only)
    hard_limit_grace_s: float = 5.0

    workspace_dir: Path = Path(".toolfleet/workspace")
    embedding_model: str | None = None  # a local sentence-transformers folder; default: the bundled MiniLM
    preload_embedder: bool = True
    log_format: str = "text"  # or "json": one JSON object per line, with execution id, tool, action, host
    chromium_path: str = "/usr/bin/chromium"

    def api_base_url(self) -> str:
        return self.api_url or f"http://{self.api_host}:{self.api_port}"

    def state_path(self) -> Path:
        return self.state_dir.expanduser().resolve()


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, built on first use."""
    return Settings()
