"""`glob`: find workspace files by pattern."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from executables.terminal import _files, _workspace
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class MatchParams(Params):
    pattern: str = Field(min_length=1, description="e.g. '**/*.py'")
    path: str = "."
    max_results: int = Field(default=1000, ge=1, le=100_000)

    @field_validator("pattern")
    @classmethod
    def _relative(cls, v: str) -> str:
        if v.startswith("/") or ".." in v.split("/"):
            raise ValueError("pattern must be relative and must not contain '..'")
        return v


TOOL = ToolSpec("glob", "Find files in the worker's workspace by glob pattern", "terminal",
                actions={"match": MatchParams}, weight=0.6, time_limit_s=30)


def _match(p: MatchParams) -> dict[str, Any]:
    base = _workspace.resolve(p.path)
    if not base.is_dir():
        raise ExecutableError(f"{p.path!r} is not a folder in the workspace")
    found = [x for x in _files.walk(base, p.pattern, include_hidden=True) if x.is_file()]
    return {"matches": [_workspace.relative(x) for x in found[: p.max_results]],
            "truncated": len(found) > p.max_results}


run = TOOL.dispatcher({"match": _match})
