"""`grep`: search workspace files for a regular expression."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from executables.terminal import _files, _workspace
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class SearchParams(Params):
    pattern: str = Field(min_length=1, description="a Python regular expression")
    path: str = "."
    glob: str = Field(default="**/*", description="which files to search")
    ignore_case: bool = False
    max_matches: int = Field(default=500, ge=1, le=100_000)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return v


TOOL = ToolSpec("grep", "Search files in the worker's workspace for a regular expression", "terminal",
                actions={"search": SearchParams}, weight=0.6, time_limit_s=60)


def _search(p: SearchParams) -> dict[str, Any]:
    base = _workspace.resolve(p.path)
    if not base.exists():
        raise ExecutableError(f"no {p.path!r} in the workspace")
    rx = re.compile(p.pattern, re.IGNORECASE if p.ignore_case else 0)
    files = [base] if base.is_file() else [x for x in _files.walk(base, p.glob, False) if x.is_file()]
    matches: list[dict[str, Any]] = []
    for f in files:
        try:
            with f.open(encoding="utf-8", errors="strict") as fh:
                for number, line in enumerate(fh, 1):
                    if rx.search(line):
                        matches.append({"path": _workspace.relative(f), "line": number, "text": line.rstrip("\n")})
                        if len(matches) >= p.max_matches:
                            return {"matches": matches, "truncated": True}
        except UnicodeDecodeError:
            continue  # binary file
    return {"matches": matches, "truncated": False}


run = TOOL.dispatcher({"search": _search})
