"""Shared bits of the file tools."""

from __future__ import annotations

from pathlib import Path

from executables.terminal import _workspace
from toolfleet.errors import ExecutableError

MAX_READ = 10_000_000


def existing_file(path: str) -> Path:
    full = _workspace.resolve(path)
    if not full.exists():
        raise ExecutableError(f"no file {path!r} in the workspace")
    if not full.is_file():
        raise ExecutableError(f"{path!r} is not a file")
    return full


def walk(base: Path, pattern: str, include_hidden: bool) -> list[Path]:
    """Paths under base matching the glob pattern that stay inside the workspace (symlinks included)."""
    out = []
    ws = _workspace.root()
    for p in sorted(base.glob(pattern)):
        rel = p.relative_to(base).parts
        if not include_hidden and any(part.startswith(".") for part in rel):
            continue
        real = p.resolve()
        if real == ws or real.is_relative_to(ws):
            out.append(p)
    return out
