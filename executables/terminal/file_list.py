"""`file_list`: list a workspace folder."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from executables.terminal import _files, _workspace
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class ListParams(Params):
    path: str = "."
    recursive: bool = False
    include_hidden: bool = False
    max_entries: int = Field(default=1000, ge=1, le=100_000)


TOOL = ToolSpec("file_list", "List files and folders in the worker's workspace", "terminal",
                actions={"list": ListParams}, weight=0.6, time_limit_s=30)


def _list(p: ListParams) -> dict[str, Any]:
    base = _workspace.resolve(p.path)
    if not base.is_dir():
        raise ExecutableError(f"{p.path!r} is not a folder in the workspace")
    paths = _files.walk(base, "**/*" if p.recursive else "*", p.include_hidden)
    entries = [{"path": _workspace.relative(x),
                "type": "dir" if x.is_dir() else "file", "size": x.stat().st_size if x.is_file() else None}
               for x in paths[: p.max_entries]]
    return {"path": _workspace.relative(base), "entries": entries, "truncated": len(paths) > p.max_entries}


run = TOOL.dispatcher({"list": _list})
