"""Tool definitions (L1): what a tool is, as stored in Postgres and published by the API."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["NAME_PATTERN", "CATEGORY_PATTERN", "Params", "ToolDefinition", "ToolSpec"]

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
CATEGORY_PATTERN = r"^[a-z][a-z0-9_-]{0,63}$"


class Params(BaseModel):
    """Base for an action's params model: unknown keys are refused, so typos surface as 422s."""

    model_config = ConfigDict(extra="forbid")


class ToolDefinition(BaseModel):
    """A registered tool, with the seed's field names plus a JSON Schema per action."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="unique tool name, e.g. 'browser'")
    description: str = ""
    category: str = Field(pattern=CATEGORY_PATTERN, description="also the name of the Celery queue")
    actions: list[str] = Field(min_length=1)
    run_file: str = Field(description="the executable's file, e.g. 'browser.py'")
    run_type: str = "python"
    requires_env: list[str] = Field(default_factory=list)
    weight: float = Field(default=0.5, ge=0.0, le=1.0)
    enabled: bool = True
    version: int = 1
    time_limit_s: float = Field(default=60.0, gt=0, le=86_400)
    params_schemas: dict[str, dict[str, Any]] = Field(default_factory=dict)
    module: str = Field(default="", description="importable module of the executable, e.g. 'executables.x.y'")
    builtin: bool = False
    body: list[dict[str, Any]] | None = Field(default=None, description="steps of a composite tool")
    network: bool = Field(default=False, description="runtime tools: may the sandbox reach the network")
    memory_mb: int = Field(default=256, ge=32, le=16_384, description="runtime tools: sandbox memory limit")
    status: str = Field(default="ok", description="ok, or broken when its pre-flight or runs keep failing")
    idempotent: bool = Field(default=True, description="safe to run again if a crash may have interrupted it")
    rate_limit_per_min: int | None = Field(default=None, ge=1, description="accepted executions per minute")

    @field_validator("requires_env")
    @classmethod
    def _env_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{name!r} is not an environment variable name")
        return names

    def schema_for(self, action: str) -> dict[str, Any]:
        return self.params_schemas.get(action, {"type": "object"})


class ToolSpec:
    """How a built-in executable declares itself: one pydantic params model per action.

    >>> TOOL = ToolSpec("introspect", "Look inside toolfleet", "internal",
    ...                 actions={"health": HealthParams}, time_limit_s=10)
    """

    def __init__(
        self,
        name: str,
        description: str,
        category: str,
        actions: dict[str, type[BaseModel]],
        *,
        requires_env: list[str] | None = None,
        weight: float = 0.5,
        time_limit_s: float = 60.0,
        idempotent: bool = True,
    ) -> None:
        self.name, self.description, self.category = name, description, category
        self.actions = actions
        self.requires_env = requires_env or []
        self.weight = weight
        self.time_limit_s = time_limit_s
        self.idempotent = idempotent

    def definition(self, module: str) -> ToolDefinition:
        return ToolDefinition(
            name=self.name,
            description=self.description,
            category=self.category,
            actions=list(self.actions),
            run_file=module.rsplit(".", 1)[-1] + ".py",
            requires_env=self.requires_env,
            weight=self.weight,
            time_limit_s=self.time_limit_s,
            idempotent=self.idempotent,
            params_schemas={a: m.model_json_schema() for a, m in self.actions.items()},
            module=module,
            builtin=True,
        )

    def parse(self, action: str, params: dict[str, Any]) -> BaseModel:
        """Validate params with the action's model (raises pydantic.ValidationError)."""
        return self.actions[action].model_validate(params)

    def dispatcher(self, handlers: dict[str, Callable[[Any], Any]]) -> Callable[[str, dict[str, Any]], Any]:
        """A `run(action, params)` that validates params and calls `handlers[action](model)`."""
        missing = set(self.actions) - set(handlers)
        if missing:
            raise TypeError(f"{self.name}: no handler for actions {sorted(missing)}")

        def run(action: str, params: dict[str, Any]) -> Any:
            if action not in handlers:
                raise ValueError(f"{self.name} has no action {action!r}; valid: {', '.join(self.actions)}")
            return handlers[action](self.parse(action, params))

        return run
