"""toolfleet: distributed tool execution for AI agents.

`Client` / `AsyncClient` talk to a toolfleet API; see `toolfleet.client`.
"""

from toolfleet.client import APIError, AsyncClient, Client, Execution, ToolMatch

__all__ = ["APIError", "AsyncClient", "Client", "Execution", "ToolMatch"]
