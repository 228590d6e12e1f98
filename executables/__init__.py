"""L3: the built-in tool implementations, one module per tool, grouped by category.

Each module declares `TOOL` (a `registry.definitions.ToolSpec`) and `run(action, params)`.
"""
