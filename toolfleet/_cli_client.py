"""The CLI commands that talk to a running API: tools, run, discover, executions, workers."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import typer
from rich.console import Console
from rich.table import Table

from toolfleet.client import APIError, Client, Execution
from toolfleet.settings import get_settings

console = Console()
JSON_OPT = typer.Option(False, "--json", help="print JSON, for scripts")
API_OPT = typer.Option(None, "--api", help="API base URL (default TOOLFLEET_API_URL or http://127.0.0.1:8000)")


def _client(api: str | None) -> Client:
    s = get_settings()
    return Client(api or s.api_base_url(), api_key=s.api_key)


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except APIError as exc:
        typer.secho(f"error: {exc.detail}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from None
    except httpx.TransportError as exc:
        typer.secho(f"error: the API is not reachable ({exc}); start it with `toolfleet up` or pass --api",
                    fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from None


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """`key=value` pairs; a value that parses as JSON is taken as JSON (numbers, lists, true), else text."""
    params: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise typer.BadParameter(f"{pair!r} is not key=value")
        key, raw = pair.split("=", 1)
        try:
            params[key] = json.loads(raw)
        except ValueError:
            params[key] = raw
    return params


def tools(category: str | None = typer.Option(None), as_json: bool = JSON_OPT, api: str | None = API_OPT) -> None:
    """List registered tools with their availability."""
    with _client(api) as client:
        items = _call(client.tools, category)
    if as_json:
        _print_json(items)
        return
    table = Table("tool", "category", "actions", "available", "hosts / missing env")
    for t in items:
        where = ", ".join(t["hosts"]) if t["available"] else ", ".join(t["missing_env"]) or t["unavailable_reason"]
        table.add_row(t["name"], t["category"], ", ".join(t["actions"]),
                      "[green]yes[/]" if t["available"] else "[red]no[/]", where or "")
    console.print(table)


def _render(record: Execution, as_json: bool) -> None:
    if as_json:
        _print_json(record.model_dump())
        return
    colour = {"succeeded": "green", "failed": "red", "timed_out": "yellow"}.get(record.status, "white")
    console.print(f"[bold]{record.tool_name}.{record.action}[/] [{colour}]{record.status}[/] "
                  f"in {record.duration_ms or 0:.1f} ms on {record.worker} (id {record.id})")
    if record.error:
        console.print(f"[red]{record.error.get('type')}: {record.error.get('message')}[/]")
    if isinstance(record.output, dict):
        table = Table("key", "value")
        for k, v in record.output.items():
            table.add_row(str(k), v if isinstance(v, str) else json.dumps(v, default=str))
        console.print(table)
    elif record.output is not None:
        console.print_json(json.dumps(record.output, default=str))


def run(
    tool: str = typer.Argument(..., help="tool name"),
    action: str = typer.Argument(..., help="action name"),
    params: list[str] = typer.Argument(None, help="key=value params; values are JSON when they parse"),
    target: str | None = typer.Option(None, help="run on this host"),
    wait: float = typer.Option(120, help="seconds to wait for the result"),
    as_json: bool = JSON_OPT,
    api: str | None = API_OPT,
) -> None:
    """Run a tool action and show the result."""
    with _client(api) as client:
        execution_id = _call(client.submit, tool, action, parse_params(params or []), target=target)
        if as_json:
            record = _call(client.wait, execution_id, timeout=wait)
        else:
            with console.status(f"{tool}.{action} queued ...") as status:
                deadline = time.monotonic() + wait
                while True:
                    record = _call(client.execution, execution_id)
                    status.update(f"{tool}.{action} {record.status} ...")
                    if record.done or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
    _render(record, as_json)
    if not record.done:
        raise typer.Exit(3)
    if not record.succeeded:
        raise typer.Exit(1)


def discover(
    query: str = typer.Argument(..., help="the goal, in words"),
    k: int = typer.Option(5, min=1, max=50),
    category: str | None = typer.Option(None),
    available_only: bool = typer.Option(False),
    as_json: bool = JSON_OPT,
    api: str | None = API_OPT,
) -> None:
    """Find the tools that fit a goal."""
    with _client(api) as client:
        matches = _call(client.discover, query, k=k, category=category, available_only=available_only)
    if as_json:
        _print_json([m.model_dump() for m in matches])
        return
    table = Table("score", "tool", "category", "description", "text#", "vector#")
    for m in matches:
        table.add_row(f"{m.score:.4f}", m.name, m.category, m.description[:70], str(m.parts.get("text_rank") or "-"),
                      str(m.parts.get("vector_rank") or "-"))
    console.print(table)


def executions(
    tool: str | None = typer.Option(None),
    status: str | None = typer.Option(None),
    limit: int = typer.Option(20, min=1, max=500),
    follow: bool = typer.Option(False, "--follow", "-f", help="keep printing new and changed executions"),
    as_json: bool = JSON_OPT,
    api: str | None = API_OPT,
) -> None:
    """Recent executions; --follow streams changes until Ctrl-C."""
    with _client(api) as client:
        items, _ = _call(client.executions, tool=tool, status=status, limit=limit)
        seen: dict[str, str] = {}

        def show(records: list[Execution]) -> None:
            for r in reversed(records):
                if seen.get(r.id) == r.status:
                    continue
                seen[r.id] = r.status
                if as_json:
                    typer.echo(json.dumps(r.model_dump(), default=str))
                else:
                    typer.echo(f"{r.submitted_at}  {r.id}  {r.tool_name}.{r.action:<14} {r.status:<10} "
                               f"{'' if r.duration_ms is None else f'{r.duration_ms:.0f} ms':>9}  {r.worker or ''}")

        show(items)
        while follow:
            time.sleep(1.0)
            items, _ = _call(client.executions, tool=tool, status=status, limit=limit)
            show(items)


def workers(as_json: bool = JSON_OPT, api: str | None = API_OPT) -> None:
    """Live workers: host, queues, concurrency, env names present."""
    with _client(api) as client:
        items = _call(client.workers)
    if as_json:
        _print_json(items)
        return
    table = Table("worker", "category", "queues", "concurrency", "env present", "last seen")
    for w in items:
        table.add_row(w["name"], w["category"], ", ".join(w["queues"]), str(w["concurrency"]),
                      ", ".join(w["env_present"]), w["last_seen"])
    console.print(table)


def plan_submit(
    file: typer.FileText = typer.Argument(..., help="a JSON file: {\"goal\", \"blocks\", \"review\"?}"),
    approve_all: bool = typer.Option(False, "--approve", help="approve every review gate as it comes"),
    wait: float = typer.Option(600, help="seconds to follow the plan"),
    as_json: bool = JSON_OPT,
    api: str | None = API_OPT,
) -> None:
    """Submit a plan and follow it block by block until it ends or waits for you."""
    try:
        spec = json.load(file)
    except ValueError as exc:
        typer.secho(f"error: {file.name} is not JSON: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from None
    with _client(api) as client:
        plan = _call(client.submit_plan, spec.get("blocks"), goal=spec.get("goal", ""),
                     review=spec.get("review", "none"))
        plan_id = plan["plan_id"]
        if not as_json:
            typer.echo(f"plan {plan_id}: {len(plan['blocks'])} blocks, review {plan['review']}")
        seen: dict[tuple[int, int], str] = {}
        deadline = time.monotonic() + wait
        while True:
            plan = _call(client.plan, plan_id)
            for block in plan["blocks"]:
                for i, step in enumerate(block["steps"]):
                    key = (block["index"], i)
                    if seen.get(key) != step["status"] and step["status"] != "pending":
                        seen[key] = step["status"]
                        if not as_json:
                            typer.echo(f"  block {block['index']} step {i} {step['tool']}.{step['action']}: "
                                       f"{step['status']}")
            if plan["status"] in ("REVIEW", "VERIFYING") and approve_all:
                if not as_json:
                    typer.echo(f"  {plan['status'].lower()} block {plan['current_block']}: approved")
                _call(client.approve, plan_id)
                continue
            if plan["status"] in ("REVIEW", "VERIFYING", "FIXING", "DONE", "FAILED", "CANCELLED") \
                    or time.monotonic() > deadline:
                break
            time.sleep(0.3)
    if as_json:
        _print_json(plan)
    else:
        typer.echo(f"plan {plan_id}: {plan['status']}" + (f" — {plan['error']}" if plan.get("error") else ""))
        if plan["status"] in ("REVIEW", "VERIFYING"):
            typer.echo(f"  waiting for you: POST /api/plans/{plan_id}/approve (or run again with --approve)")
    raise typer.Exit(0 if plan["status"] in ("DONE", "REVIEW", "VERIFYING") else 1)


def register(app: typer.Typer) -> None:
    for fn in (tools, run, discover, executions, workers):
        app.command()(fn)
    plan_app = typer.Typer(help="Plans: submit a plan file and follow it.")
    plan_app.command("submit")(plan_submit)
    app.add_typer(plan_app, name="plan")
