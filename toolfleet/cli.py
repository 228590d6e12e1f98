"""The `toolfleet` command."""

from __future__ import annotations

import sys

import typer

from toolfleet import _cli_client
from toolfleet.errors import ToolfleetError
from toolfleet.settings import get_settings

__all__ = ["app", "main"]

app = typer.Typer(help="toolfleet: distributed tool execution for AI agents.", no_args_is_help=True,
                  add_completion=False)


def _fail(exc: Exception) -> None:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


@app.command()
def up(
    concurrency: int = typer.Option(2, min=1, help="worker processes per category"),
    flower: bool = typer.Option(True, help="start Flower too"),
) -> None:
    """Start everything (embedded Postgres and Redis unless URLs are set, API, a worker per category, Flower)."""
    from toolfleet.stack import Stack

    stack = Stack(get_settings(), concurrency=concurrency, flower=flower)
    code = 1
    try:
        stack.start_services()
        stack.migrate()
        stack.start_children()
        code = stack.watch()
    except (ToolfleetError, RuntimeError) as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    except KeyboardInterrupt:
        code = 0
    finally:
        stack.stop()
    raise typer.Exit(code)


@app.command()
def migrate() -> None:
    """Apply schema migrations and load the built-in tools (starts the embedded Postgres if it is needed)."""
    from registry.migrate import migrate as run_migrations
    from toolfleet.services import EmbeddedPostgres, database_url

    s = get_settings()
    pg = None
    try:
        if not s.database_url:
            pg = EmbeddedPostgres(s.state_path() / "postgres", s.embedded_pg_port)
            if pg.is_running():
                pg = None
            else:
                typer.echo("starting the embedded PostgreSQL for the migration ...")
                pg.start()
        names = run_migrations(database_url(s))
        typer.echo(f"schema at head; {len(names)} built-in tools registered: {', '.join(names)}")
    except ToolfleetError as exc:
        _fail(exc)
    finally:
        if pg is not None:
            pg.stop()


@app.command()
def worker(
    category: str = typer.Option(..., help="the tool category (queue) to consume, e.g. browser"),
    concurrency: int = typer.Option(2, min=1, help="parallel executions in this worker"),
    hostname: str | None = typer.Option(None, help="host name for targeted queues (default: this machine's)"),
    name: str | None = typer.Option(None, help="Celery node name (default: <category>.<pid>@<host>)"),
    loglevel: str = typer.Option("INFO"),
    metrics_port: int | None = typer.Option(None, help="serve Prometheus metrics on this port (/metrics)"),
) -> None:
    """Run a worker consuming `<category>` and `<category>@<hostname>`."""
    from workers.worker import run_worker

    try:
        run_worker(category, concurrency=concurrency, host=hostname, name=name, loglevel=loglevel,
                   metrics_port=metrics_port)
    except ToolfleetError as exc:
        _fail(exc)


@app.command()
def api(
    host: str | None = typer.Option(None, help="listen address (default TOOLFLEET_API_HOST)"),
    port: int | None = typer.Option(None, help="port (default TOOLFLEET_API_PORT)"),
) -> None:
    """Run the HTTP API alone (against DATABASE_URL/BROKER_URL or the embedded services)."""
    import uvicorn

    from api.app import create_app
    from toolfleet.services import check_database

    s = get_settings()
    if host:
        s = s.model_copy(update={"api_host": host})  # auth=auto decides on the address actually served
    try:
        check_database()
    except ToolfleetError as exc:
        _fail(exc)
    uvicorn.run(create_app(s), host=s.api_host, port=port or s.api_port)


keys_app = typer.Typer(help="API keys (written straight to Postgres: run it where the database is reachable).")
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(
    name: str = typer.Option(..., help="a name for the key, e.g. the agent using it"),
    scopes: str = typer.Option("read,execute", help="comma-separated: read, execute, admin"),
    categories: str | None = typer.Option(None, help="only tools of these categories (comma-separated)"),
    tools: str | None = typer.Option(None, help="only these tools (comma-separated)"),
) -> None:
    """Create an API key; it is printed once."""
    from registry.db import connect
    from registry.keys import create_key

    def split(v: str | None) -> list[str] | None:
        return [x.strip() for x in v.split(",") if x.strip()] if v else None

    try:
        with connect() as conn:
            key, _ = create_key(conn, name=name, scopes=split(scopes) or [], categories=split(categories),
                                tools=split(tools))
    except (ToolfleetError, ValueError) as exc:
        _fail(exc)
    typer.echo(key)
    typer.echo("(shown only now; send it as `Authorization: Bearer <key>` or set TOOLFLEET_API_KEY)", err=True)


@keys_app.command("list")
def keys_list() -> None:
    """List keys (never their secrets)."""
    from registry.db import connect
    from registry.keys import list_keys

    try:
        with connect() as conn:
            for k in list_keys(conn):
                state = "revoked" if k["revoked_at"] else "active"
                typer.echo(f"{k['name']:20} {k['prefix']}…  {','.join(k['scopes']):20} {state}")
    except ToolfleetError as exc:
        _fail(exc)


@keys_app.command("revoke")
def keys_revoke(name: str = typer.Argument(...)) -> None:
    """Revoke a key by name."""
    from registry.db import connect
    from registry.keys import revoke_key

    try:
        with connect() as conn:
            if not revoke_key(conn, name):
                _fail(ValueError(f"no active key named {name!r}"))
    except ToolfleetError as exc:
        _fail(exc)
    typer.echo(f"revoked {name}")


@app.command()
def mcp(
    transport: str = typer.Option("stdio", help="stdio, or http (streamable HTTP at /mcp)"),
    mode: str = typer.Option("actions", help="actions: one MCP tool per tool action; discovery: search_tools + "
                                             "call_tool"),
    api_url: str | None = typer.Option(None, "--api", help="toolfleet API (default TOOLFLEET_API_URL)"),
    host: str = typer.Option("127.0.0.1", help="listen address for http"),
    port: int = typer.Option(8765, help="port for http"),
    wait: float = typer.Option(300, help="seconds a call waits for its execution"),
) -> None:
    """Serve toolfleet's tools over the Model Context Protocol."""
    import anyio

    from toolfleet.mcp_server import build_server, run_http, run_stdio

    if transport not in ("stdio", "http"):
        _fail(ValueError("--transport is stdio or http"))
    if mode not in ("actions", "discovery"):
        _fail(ValueError("--mode is actions or discovery"))
    s = get_settings()
    server = build_server(api_url or s.api_base_url(), mode=mode, wait=wait, api_key=s.api_key)
    if transport == "stdio":
        anyio.run(run_stdio, server)
    else:
        run_http(server, host, port)


_cli_client.register(app)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
