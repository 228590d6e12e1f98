"""The toolfleet error hierarchy.

    ToolfleetError
    ├── ServiceUnavailable      a database or broker cannot be reached (the message names the fix)
    ├── ToolNotFound            no tool of that name is registered
    ├── ActionNotFound          the tool has no such action (lists the valid ones)
    ├── InvalidParams           params break the action's schema (carries field errors)
    ├── ToolDisabled            the tool exists but is switched off
    ├── ToolUnavailable         no live worker can run it (carries the missing env names)
    ├── ExecutableError         the tool's own code failed (permanent)
    │   ├── ToolTimeout         the tool's own deadline passed (recorded as timed_out)
    │   └── PathEscape          a path resolves outside the workspace root
    ├── RetryableError(delay=)  a transient failure the executor may retry
    ├── ExecutionNotFound       no execution with that id
    ├── Backpressure(retry_after=)  a queue or rate limit was reached (HTTP 429)
    └── Forbidden               the API key may not use that tool or category (HTTP 403)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ToolfleetError",
    "ServiceUnavailable",
    "ToolNotFound",
    "ActionNotFound",
    "InvalidParams",
    "ToolDisabled",
    "ToolUnavailable",
    "ExecutableError",
    "ToolTimeout",
    "PathEscape",
    "RetryableError",
    "ExecutionNotFound",
    "Backpressure",
    "Forbidden",
]


class ToolfleetError(Exception):
    """Root of every error toolfleet raises on purpose."""


class ServiceUnavailable(ToolfleetError):
    """A service toolfleet depends on is not reachable."""


class ToolNotFound(ToolfleetError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no tool named {name!r} is registered; GET /api/form/tools lists them")
        self.name = name


class ActionNotFound(ToolfleetError):
    def __init__(self, tool: str, action: str, valid: list[str]) -> None:
        super().__init__(f"tool {tool!r} has no action {action!r}; valid actions: {', '.join(valid)}")
        self.tool, self.action, self.valid = tool, action, valid


class InvalidParams(ToolfleetError):
    def __init__(self, tool: str, action: str, errors: list[dict[str, Any]]) -> None:
        detail = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())) or '(params)'}: {e.get('msg')}"
                           for e in errors)
        super().__init__(f"invalid params for {tool}.{action}: {detail}")
        self.tool, self.action, self.errors = tool, action, errors


class ToolDisabled(ToolfleetError):
    def __init__(self, name: str) -> None:
        super().__init__(f"tool {name!r} is disabled; enable it with PUT /api/form/tools/{name}")
        self.name = name


class ToolUnavailable(ToolfleetError):
    def __init__(self, name: str, missing_env: list[str], reason: str = "") -> None:
        msg = reason or (f"tool {name!r} needs env {', '.join(missing_env)} and no live worker has it; "
                         "set it on a worker of its category and restart that worker")
        super().__init__(msg)
        self.name, self.missing_env = name, missing_env


class ExecutableError(ToolfleetError):
    """A permanent failure inside a tool's own code."""


class ToolTimeout(ExecutableError):
    """The tool's own deadline passed (e.g. a command's timeout); recorded as `timed_out`."""


class PathEscape(ExecutableError):
    """A path that resolves outside the workspace root."""


class RetryableError(ToolfleetError):
    """A transient failure; the executor retries it after `delay` seconds."""

    def __init__(self, message: str, delay: float = 1.0) -> None:
        super().__init__(message)
        self.delay = delay


class Backpressure(ToolfleetError):
    """Too much work waiting (a queue limit) or too fast (a rate limit): answered 429 with Retry-After."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Forbidden(ToolfleetError):
    """The API key may not do this (answered 403)."""


class ExecutionNotFound(ToolfleetError):
    def __init__(self, execution_id: str) -> None:
        super().__init__(f"no execution with id {execution_id!r}")
        self.execution_id = execution_id
