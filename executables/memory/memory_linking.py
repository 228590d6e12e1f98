"""`memory_linking`: a multi-parent DAG of concepts; links that would close a cycle are refused."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb
from pydantic import Field

from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError
from workers.executor import worker_connection

_NAME = Field(min_length=1, max_length=300)


class AddNodeParams(Params):
    name: str = _NAME
    status: str = Field(default="active", max_length=50)
    data: dict[str, Any] = Field(default_factory=dict)


class LinkParams(Params):
    parent: str = _NAME
    child: str = _NAME


class NodeParams(Params):
    name: str = _NAME


class StatusParams(Params):
    status: str = Field(max_length=50)


class SetStatusParams(Params):
    name: str = _NAME
    status: str = Field(max_length=50)


class EmptyParams(Params):
    pass


class ContextParams(Params):
    root: str | None = Field(default=None, description="render the subtree under this node (default: all roots)")
    max_depth: int = Field(default=10, ge=1, le=100)


TOOL = ToolSpec(
    "memory_linking",
    "Concept graph memory: a multi-parent DAG of nodes; link and unlink concepts (cycles refused), walk parents, "
    "children, ancestors, descendants, roots and leaves, filter by status, render as indented context",
    "memory",
    actions={"add_node": AddNodeParams, "link": LinkParams, "unlink": LinkParams, "parents": NodeParams,
             "children": NodeParams, "ancestors": NodeParams, "descendants": NodeParams, "roots": EmptyParams,
             "leaves": EmptyParams, "by_status": StatusParams, "set_status": SetStatusParams,
             "to_context": ContextParams},
    weight=0.6,
    time_limit_s=30,
)


def _require(name: str) -> None:
    if worker_connection().execute("SELECT 1 FROM memory_nodes WHERE name = %s", (name,)).fetchone() is None:
        raise ExecutableError(f"no node named {name!r}; add it with add_node first")


def _names(sql: str, args: tuple[Any, ...] = ()) -> list[str]:
    return [r["name"] for r in worker_connection().execute(sql, args).fetchall()]


_ANCESTORS = """WITH RECURSIVE up(name) AS (SELECT parent FROM memory_links WHERE child = %s
                UNION SELECT l.parent FROM memory_links l JOIN up ON l.child = up.name) SELECT name FROM up"""
_DESCENDANTS = """WITH RECURSIVE down(name) AS (SELECT child FROM memory_links WHERE parent = %s
                  UNION SELECT l.child FROM memory_links l JOIN down ON l.parent = down.name) SELECT name FROM down"""


def _add_node(p: AddNodeParams) -> dict[str, Any]:
    worker_connection().execute(
        "INSERT INTO memory_nodes (name, status, data) VALUES (%s, %s, %s) "
        "ON CONFLICT (name) DO UPDATE SET status = EXCLUDED.status, data = EXCLUDED.data",
        (p.name, p.status, Jsonb(p.data)))
    return {"name": p.name, "status": p.status}


def _link(p: LinkParams) -> dict[str, Any]:
    _require(p.parent)
    _require(p.child)
    if p.parent == p.child:
        raise ExecutableError(f"a node cannot be its own parent ({p.parent!r})")
    conn = worker_connection()
    with conn.transaction():
        conn.execute("LOCK TABLE memory_links IN SHARE ROW EXCLUSIVE MODE")  # two concurrent links cannot race a cycle
        if p.parent in _names(_DESCENDANTS, (p.child,)):
            raise ExecutableError(f"linking {p.parent!r} -> {p.child!r} would create a cycle: {p.child!r} is "
                                  f"already an ancestor of {p.parent!r}")
        conn.execute("INSERT INTO memory_links (parent, child) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                     (p.parent, p.child))
    return {"parent": p.parent, "child": p.child}


def _unlink(p: LinkParams) -> dict[str, Any]:
    n = worker_connection().execute("DELETE FROM memory_links WHERE parent = %s AND child = %s",
                                    (p.parent, p.child)).rowcount
    if not n:
        raise ExecutableError(f"there is no link {p.parent!r} -> {p.child!r}")
    return {"unlinked": [p.parent, p.child]}


def _walk(sql: str) -> Any:
    def handler(p: NodeParams) -> dict[str, Any]:
        _require(p.name)
        return {"name": p.name, "nodes": sorted(_names(sql, (p.name,)))}
    return handler


def _roots(_: EmptyParams) -> dict[str, Any]:
    return {"nodes": _names("SELECT name FROM memory_nodes n WHERE NOT EXISTS "
                            "(SELECT 1 FROM memory_links l WHERE l.child = n.name) ORDER BY name")}


def _leaves(_: EmptyParams) -> dict[str, Any]:
    return {"nodes": _names("SELECT name FROM memory_nodes n WHERE NOT EXISTS "
                            "(SELECT 1 FROM memory_links l WHERE l.parent = n.name) ORDER BY name")}


def _by_status(p: StatusParams) -> dict[str, Any]:
    return {"status": p.status, "nodes": _names("SELECT name FROM memory_nodes WHERE status = %s ORDER BY name",
                                                (p.status,))}


def _set_status(p: SetStatusParams) -> dict[str, Any]:
    _require(p.name)
    worker_connection().execute("UPDATE memory_nodes SET status = %s WHERE name = %s", (p.status, p.name))
    return {"name": p.name, "status": p.status}


def _to_context(p: ContextParams) -> dict[str, Any]:
    conn = worker_connection()
    nodes = {r["name"]: r["status"] for r in conn.execute("SELECT name, status FROM memory_nodes").fetchall()}
    children: dict[str, list[str]] = {}
    for r in conn.execute("SELECT parent, child FROM memory_links ORDER BY child").fetchall():
        children.setdefault(r["parent"], []).append(r["child"])
    if p.root is not None:
        _require(p.root)
        starts = [p.root]
    else:
        starts = _roots(EmptyParams())["nodes"]
    lines: list[str] = []

    def render(name: str, depth: int) -> None:
        status = nodes.get(name, "")
        lines.append(f"{'  ' * depth}- {name}" + (f" [{status}]" if status and status != "active" else ""))
        if depth + 1 < p.max_depth:
            for child in children.get(name, []):
                render(child, depth + 1)

    for start in starts:
        render(start, 0)
    return {"text": "\n".join(lines), "nodes": len(nodes)}


run = TOOL.dispatcher({
    "add_node": _add_node, "link": _link, "unlink": _unlink, "parents": _walk(
        "SELECT parent AS name FROM memory_links WHERE child = %s"),
    "children": _walk("SELECT child AS name FROM memory_links WHERE parent = %s"),
    "ancestors": _walk(_ANCESTORS), "descendants": _walk(_DESCENDANTS), "roots": _roots, "leaves": _leaves,
    "by_status": _by_status, "set_status": _set_status, "to_context": _to_context,
})
