"""toolfleet as a Model Context Protocol server (stdio or streamable HTTP), over the toolfleet API.

Two ways to expose the registry:
  * `actions` (default): one MCP tool per tool action, named `<tool>.<action>`, with its JSON Schema;
  * `discovery`: two MCP tools, `search_tools` and `call_tool`, for registries too large to list.
Every call goes through the API, so it runs on the queue of its category, on whichever host serves it.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from toolfleet.client import APIError, AsyncClient

__all__ = ["build_server", "run_stdio", "run_http"]

SEARCH_TOOLS = types.Tool(
    name="search_tools",
    description="Find the toolfleet tools that fit a goal (hybrid full-text and semantic search). "
                "Answers tool names, their actions and descriptions; then use call_tool.",
    input_schema={"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "description": "the goal, in words"},
        "k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5}}},
)
CALL_TOOL = types.Tool(
    name="call_tool",
    description="Run a toolfleet tool action on the worker fleet and answer its result.",
    input_schema={"type": "object", "required": ["tool", "action"], "properties": {
        "tool": {"type": "string"}, "action": {"type": "string"},
        "params": {"type": "object", "default": {}},
        "target": {"type": "string", "description": "run on this host"}}},
)


def _result(payload: Any, *, error: bool = False) -> types.CallToolResult:
    text = payload if isinstance(payload, str) else json.dumps(payload, default=str, indent=1)
    structured = payload if isinstance(payload, dict) else None
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured,
                                is_error=error)


def build_server(api_url: str, *, mode: str = "actions", wait: float = 300.0, api_key: str | None = None) -> Server:
    """An MCP server whose tools are toolfleet's registry, executed through the API at `api_url`."""
    if mode not in ("actions", "discovery"):
        raise ValueError("mode is 'actions' or 'discovery'")

    async def execute(tool: str, action: str, params: dict[str, Any], target: str | None) -> types.CallToolResult:
        async with AsyncClient(api_url, api_key=api_key) as client:
            try:
                record = await client.execute(tool, action, params, target=target, wait=wait)
            except APIError as exc:
                return _result(f"{exc.code}: {exc.detail}", error=True)
            if not record.done:
                return _result({"execution_id": record.id, "status": record.status,
                                "note": f"still running after {wait:g}s"}, error=True)
            if record.succeeded:
                out = record.output if isinstance(record.output, dict) else {"result": record.output}
                return _result(out)
            return _result({"status": record.status, "error": record.error, "execution_id": record.id},
                           error=True)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if mode == "discovery":
            return types.ListToolsResult(tools=[SEARCH_TOOLS, CALL_TOOL])
        async with AsyncClient(api_url, api_key=api_key) as client:
            registry = await client.tools()
        tools = []
        for t in registry:
            if not t["enabled"]:
                continue
            for action in t["actions"]:
                schema = dict(t["params_schemas"].get(action) or {"type": "object"})
                schema.setdefault("type", "object")
                availability = "" if t["available"] else " (currently unavailable: no live worker can run it)"
                tools.append(types.Tool(name=f"{t['name']}.{action}", input_schema=schema,
                                        description=f"{t['description']} — action `{action}`{availability}"))
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        if mode == "discovery":
            if params.name == "search_tools":
                async with AsyncClient(api_url, api_key=api_key) as client:
                    try:
                        matches = await client.discover(str(args.get("query", "")), k=int(args.get("k", 5)))
                    except APIError as exc:
                        return _result(f"{exc.code}: {exc.detail}", error=True)
                return _result({"tools": [{"name": m.name, "actions": m.actions, "description": m.description,
                                           "category": m.category, "available": m.available} for m in matches]})
            if params.name == "call_tool":
                return await execute(str(args.get("tool")), str(args.get("action")), dict(args.get("params") or {}),
                                     args.get("target"))
            return _result(f"unknown tool {params.name!r}; use search_tools or call_tool", error=True)
        if "." not in params.name:
            return _result(f"unknown tool {params.name!r}; names are <tool>.<action>", error=True)
        tool, action = params.name.split(".", 1)
        target = args.pop("_target", None)
        return await execute(tool, action, args, target)

    return Server("toolfleet", version="0.1.0", instructions="Tools run on a distributed toolfleet worker fleet.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def run_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_http(server: Server, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(server.streamable_http_app(host=host), host=host, port=port, log_level="warning")
