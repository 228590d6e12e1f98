"""`file_edit`: replace one unique snippet in a workspace file."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from executables.terminal import _files, _workspace
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class ReplaceParams(Params):
    path: str
    old: str = Field(min_length=1, description="text that occurs exactly once in the file")
    new: str


TOOL = ToolSpec("file_edit", "Edit a file in the workspace by replacing a unique snippet of text", "terminal",
                actions={"replace": ReplaceParams}, weight=0.7, time_limit_s=30,
                idempotent=False)


def _replace(p: ReplaceParams) -> dict[str, Any]:
    full = _files.existing_file(p.path)
    text = full.read_text(encoding="utf-8")
    count = text.count(p.old)
    if count == 0:
        raise ExecutableError(f"the snippet was not found in {p.path!r}; nothing changed")
    if count > 1:
        raise ExecutableError(f"the snippet occurs {count} times in {p.path!r}; give more context so it is unique")
    full.write_text(text.replace(p.old, p.new, 1), encoding="utf-8")
    line = text[: text.index(p.old)].count("\n") + 1
    return {"path": _workspace.relative(full), "replaced": 1, "line": line}


run = TOOL.dispatcher({"replace": _replace})
