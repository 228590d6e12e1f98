"""Find the built-in executables (modules under `executables/` declaring `TOOL`)."""

from __future__ import annotations

import importlib
import pkgutil

from registry.definitions import ToolDefinition, ToolSpec

__all__ = ["builtin_definitions"]


def builtin_definitions() -> list[ToolDefinition]:
    import executables

    found: list[ToolDefinition] = []
    for info in pkgutil.walk_packages(executables.__path__, prefix="executables."):
        if info.ispkg or info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        spec = getattr(module, "TOOL", None)
        if isinstance(spec, ToolSpec):
            found.append(spec.definition(info.name))
    return sorted(found, key=lambda d: d.name)
