"""The workspace root every terminal and file tool is confined to."""

from __future__ import annotations

from pathlib import Path

from toolfleet.errors import PathEscape
from toolfleet.settings import get_settings

__all__ = ["root", "resolve", "relative"]


def root() -> Path:
    path = get_settings().workspace_dir.expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def resolve(path: str) -> Path:
    """The real path of `path` (relative to the root, symlinks followed); refuses anything outside the root."""
    base = root()
    candidate = Path(path).expanduser()
    full = (candidate if candidate.is_absolute() else base / candidate).resolve()
    if full != base and not full.is_relative_to(base):
        raise PathEscape(f"path {path!r} resolves to {full}, outside the workspace root {base}; "
                         "use a path inside the workspace (relative paths are taken from its root)")
    return full


def relative(path: Path) -> str:
    rel = path.relative_to(root()).as_posix()
    return rel or "."
