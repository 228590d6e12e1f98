"""`file_read`: read a text file from the workspace."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from executables.terminal import _files, _workspace
from registry.definitions import Params, ToolSpec


class ReadParams(Params):
    path: str = Field(description="file path relative to the workspace root, e.g. notes/a.txt")
    offset: int = Field(default=0, ge=0, description="byte offset to start at")
    max_bytes: int = Field(default=1_000_000, ge=1, le=_files.MAX_READ)


TOOL = ToolSpec("file_read", "Read a text file from the worker's workspace", "terminal",
                actions={"read": ReadParams}, weight=0.7, time_limit_s=30)


def _read(p: ReadParams) -> dict[str, Any]:
    full = _files.existing_file(p.path)
    size = full.stat().st_size
    with full.open("rb") as fh:
        fh.seek(p.offset)
        data = fh.read(p.max_bytes)
    return {"path": _workspace.relative(full), "content": data.decode("utf-8", "replace"), "size": size,
            "truncated": p.offset + len(data) < size}


run = TOOL.dispatcher({"read": _read})
