"""The MCP server, driven by the MCP SDK's own client, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import httpx

from tests.conftest import ROOT, ApiProc, free_port


def _client_for(server):  # type: ignore[no-untyped-def]
    from mcp import Client

    return Client(server, read_timeout_seconds=60)


def test_stdio_lists_every_tool_action_and_calls_through_the_queues(api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "toolfleet", "mcp", "--api", api.url],
                                   cwd=str(ROOT), env={**os.environ})

    async def main() -> None:
        async with _client_for(params) as client:
            listed = await client.list_tools()
            names = {t.name: t for t in listed.tools}
            assert {"diag.echo", "diag.sleep", "terminal.run", "browser.navigate"} <= set(names)
            assert names["diag.sleep"].input_schema["required"] == ["seconds"]
            result = await client.call_tool("diag.echo", {"message": "over mcp"})
            assert not result.is_error
            assert result.structured_content == {"message": "over mcp"}
            failed = await client.call_tool("diag.fail", {"message": "mcp boom"})
            assert failed.is_error and "mcp boom" in failed.content[0].text
            bad = await client.call_tool("diag.sleep", {"seconds": "soon"})
            assert bad.is_error and "invalid_params" in bad.content[0].text

    asyncio.run(main())


def test_streamable_http_discovery_mode(api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "toolfleet", "mcp", "--transport", "http", "--port", str(port),
                             "--mode", "discovery", "--api", api.url], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and proc.poll() is None, "MCP server did not start"
                time.sleep(0.2)

        async def main() -> None:
            async with _client_for(f"http://127.0.0.1:{port}/mcp") as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert names == ["search_tools", "call_tool"]
                found = await client.call_tool("search_tools", {"query": "run a shell command", "k": 3})
                assert found.structured_content["tools"][0]["name"] == "terminal"
                ran = await client.call_tool("call_tool", {"tool": "diag", "action": "echo",
                                                           "params": {"message": 7}})
                assert ran.structured_content == {"message": 7} and not ran.is_error
                missing = await client.call_tool("call_tool", {"tool": "nope", "action": "x"})
                assert missing.is_error and "tool_not_found" in missing.content[0].text

        asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(10)
