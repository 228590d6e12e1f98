"""Discovery quality on a labelled set we did not write: Ansible modules and their documented examples.

    .venv/bin/pip install ansible          # once: the material (about 50 MB, from PyPI)
    .venv/bin/python bench/discovery_quality.py [--collections ansible.builtin,community.general] [--max-queries 1000]

Tools: every module of the chosen collections, described by its own DOCUMENTATION
(short_description, description, options with their descriptions). Queries: the `name:` of
each task in the module's own EXAMPLES that uses that module — a sentence a person wrote
to say what the step does — labelled with that module. Reports recall@1, recall@5 and MRR
for full-text only, vector only and hybrid, side by side, on all queries and on the "hard"
ones whose text does not contain the module's name.
"""

from __future__ import annotations

import argparse
import ast
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchdb import bench_database  # noqa: E402


def _strings(path: Path) -> dict[str, str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return {}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                out[node.targets[0].id] = node.value.value
    return out


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value or "")


def load_modules(collections: list[str]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    import yaml

    roots: dict[str, Path] = {}
    for coll in collections:
        if coll == "ansible.builtin":
            import ansible.modules

            roots[coll] = Path(ansible.modules.__file__).parent
        else:
            import ansible_collections

            ns, name = coll.split(".")
            roots[coll] = Path(ansible_collections.__path__[0]) / ns / name / "plugins" / "modules"
    tools, queries = [], []
    for coll, folder in roots.items():
        for path in sorted(folder.glob("*.py")):
            if path.name.startswith("_"):
                continue
            consts = _strings(path)
            try:
                doc = yaml.safe_load(consts.get("DOCUMENTATION", "")) or {}
                examples = yaml.safe_load(consts.get("EXAMPLES", "")) or []
            except yaml.YAMLError:
                continue
            if not isinstance(doc, dict) or not doc.get("module"):
                continue
            short = doc["module"]
            fqcn = f"{coll}.{short}"
            options = doc.get("options") or {}
            tools.append({"fqcn": fqcn, "short": short, "description": " ".join(
                [_text(doc.get("short_description")), _text(doc.get("description"))])[:2000],
                "options": {k: _text((v or {}).get("description"))[:300] for k, v in options.items()
                            if isinstance(v, dict)}})
            if isinstance(examples, list):
                for task in examples:
                    if isinstance(task, dict) and task.get("name") and (short in task or fqcn in task):
                        name = str(task["name"]).strip()
                        if len(name.split()) >= 3:
                            queries.append((name, fqcn))
    return tools, queries


def tool_name(fqcn: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", fqcn.lower())[:64]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collections", default="ansible.builtin,community.general,community.docker,amazon.aws")
    ap.add_argument("--max-queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    try:
        import ansible  # noqa: F401
    except ImportError:
        raise SystemExit("the material is Ansible's module docs: run `.venv/bin/pip install ansible`") from None

    from registry.db import connect
    from registry.definitions import ToolDefinition
    from registry.discovery import refresh_search, search
    from registry.embeddings import get_embedder
    from registry.tools import upsert_tool

    tools, queries = load_modules(args.collections.split(","))
    random.Random(args.seed).shuffle(queries)
    queries = queries[: args.max_queries]
    print(f"{len(tools)} tools from {args.collections}; {len(queries)} labelled queries", flush=True)
    embedder = get_embedder()
    with bench_database() as url, connect(url) as conn:
        conn.execute("DELETE FROM tools")
        definitions = []
        for t in tools:
            props = {k: {"type": "string", "description": d} for k, d in t["options"].items()}
            definitions.append(upsert_tool(conn, ToolDefinition(
                name=tool_name(t["fqcn"]), description=t["description"], category="ansible", actions=["run"],
                run_file="x.py", params_schemas={"run": {"type": "object", "properties": props}})))
        started = time.perf_counter()
        refresh_search(conn, definitions, embedder)
        print(f"indexed {len(definitions)} tools in {time.perf_counter() - started:.1f}s", flush=True)
        results: dict[str, dict[str, list[float]]] = {}
        for mode in ("fulltext", "vector", "hybrid"):
            per = {"all": [], "hard": []}  # reciprocal ranks
            for i, (query, fqcn) in enumerate(queries):
                found = search(conn, query, k=10, embedder=embedder, mode=mode, use_track_record=False)
                names = [h.name for h in found.hits]
                target = tool_name(fqcn)
                rr = 1.0 / (names.index(target) + 1) if target in names else 0.0
                per["all"].append(rr)
                short = fqcn.rsplit(".", 1)[-1]
                if short.replace("_", " ") not in query.lower() and short not in query.lower():
                    per["hard"].append(rr)
                if (i + 1) % 250 == 0:
                    print(f"  {mode}: {i + 1}/{len(queries)}", flush=True)
            results[mode] = per
    print()
    for subset in ("all", "hard"):
        n = len(results["hybrid"][subset])
        print(f"{subset} queries (n={n})" + (" — the module's name does not appear in the query" if subset == "hard"
                                               else ""))
        print(f"  {'mode':10} {'recall@1':>9} {'recall@5':>9} {'MRR':>7}")
        for mode in ("fulltext", "vector", "hybrid"):
            rrs = results[mode][subset]
            r1 = sum(1 for r in rrs if r == 1.0) / len(rrs)
            r5 = sum(1 for r in rrs if r >= 0.2) / len(rrs)
            mrr = sum(rrs) / len(rrs)
            print(f"  {mode:10} {r1:9.3f} {r5:9.3f} {mrr:7.3f}")


if __name__ == "__main__":
    main()
