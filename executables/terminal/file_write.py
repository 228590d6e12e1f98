"""`file_write`: write (or append to) a text file in the workspace."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from executables.terminal import _workspace
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError


class WriteParams(Params):
    path: str = Field(description="file path relative to the workspace root")
    content: str = Field(max_length=10_000_000)
    append: bool = False
    create_dirs: bool = Field(default=True, description="create missing parent folders")


TOOL = ToolSpec("file_write", "Write or append text to a file in the worker's workspace", "terminal",
                actions={"write": WriteParams}, weight=0.7, time_limit_s=30)


def _write(p: WriteParams) -> dict[str, Any]:
    full = _workspace.resolve(p.path)
    if full.is_dir():
        raise ExecutableError(f"{p.path!r} is a directory")
    if not full.parent.exists():
        if not p.create_dirs:
            raise ExecutableError(f"folder of {p.path!r} does not exist (set create_dirs: true)")
        full.parent.mkdir(parents=True)
    data = p.content.encode()
    with full.open("ab" if p.append else "wb") as fh:
        fh.write(data)
    return {"path": _workspace.relative(full), "bytes_written": len(data), "size": full.stat().st_size}


run = TOOL.dispatcher({"write": _write})
