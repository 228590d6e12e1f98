"""Request bodies the API accepts (responses are plain dicts built by the registry)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from registry.definitions import CATEGORY_PATTERN, NAME_PATTERN

EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")]

__all__ = ["ExecuteRequest", "Rollback", "ToolCreate", "ToolUpdate"]


class Rollback(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=1)


class ExecuteRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: str = Field(min_length=1, max_length=128)
    params: dict[str, Any] = Field(default_factory=dict)
    target: str | None = Field(default=None, max_length=253, description="pin the execution to this host")
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200)


class ToolCreate(BaseModel):
    """Register a definition for an executable module that exists on the workers, or, with `code`,
    create a runtime tool (validated, pre-flighted and run in the sandbox)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field(default="", max_length=4000)
    category: str = Field(pattern=CATEGORY_PATTERN)
    actions: list[str] = Field(min_length=1)
    code: str | None = Field(default=None, max_length=500_000,
                             description="Python source defining run(action, params); makes a runtime tool")
    network: bool = Field(default=False, description="runtime tools: allow network access in the sandbox")
    memory_mb: int = Field(default=256, ge=32, le=16_384, description="runtime tools: sandbox memory limit")
    idempotent: bool = Field(default=True, description="safe to run again after a crash interrupted it")
    rate_limit_per_min: int | None = Field(default=None, ge=1, le=1_000_000)
    run_file: str | None = Field(default=None, pattern=r"^[a-z_][a-z0-9_]*\.py$", description="e.g. 'introspect.py'")
    run_type: str = Field(default="python", pattern="^python$")
    module: str | None = Field(default=None, pattern=r"^executables(\.[a-z_][a-z0-9_]*)+$")
    requires_env: list[EnvName] = Field(default_factory=list)
    weight: float = Field(default=0.5, ge=0, le=1)
    enabled: bool = True
    time_limit_s: float = Field(default=60, gt=0, le=86_400)
    params_schemas: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ToolUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str | None = Field(default=None, max_length=500_000, description="runtime tools: new source")
    network: bool | None = None
    memory_mb: int | None = Field(default=None, ge=32, le=16_384)
    idempotent: bool | None = None
    rate_limit_per_min: int | None = Field(default=None, ge=1, le=1_000_000)
    description: str | None = Field(default=None, max_length=4000)
    requires_env: list[EnvName] | None = None
    weight: float | None = Field(default=None, ge=0, le=1)
    enabled: bool | None = None
    time_limit_s: float | None = Field(default=None, gt=0, le=86_400)
    actions: list[str] | None = Field(default=None, min_length=1)
    params_schemas: dict[str, dict[str, Any]] | None = None
