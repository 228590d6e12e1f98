"""Read an executable's source without importing it (the API never imports executables)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["module_path", "module_source"]


def module_path(module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] != "executables" or len(parts) < 2:
        return None
    spec = importlib.util.find_spec("executables")  # finding a top-level package does not run it
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root).joinpath(*parts[1:]).with_suffix(".py")
        if path.is_file():
            return path
    return None


def module_source(module: str) -> str | None:
    path = module_path(module)
    return path.read_text(encoding="utf-8") if path else None
