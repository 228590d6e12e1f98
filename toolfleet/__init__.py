"""toolfleet: distributed tool execution for AI agents."""

__all__: list[str] = []
