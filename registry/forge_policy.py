"""Static checks for runtime-created tool code: syntax, interface, and a security policy.

Each refusal names the line and the rule. The policy is an allow-list of imports (configurable
with TOOLFLEET_FORGE_ALLOWED_IMPORTS) plus refusals of dynamic code (`eval`, `exec`, `compile`,
`__import__`), introspection escapes (`getattr`, `globals`, dunder attributes such as
`__subclasses__`, `__globals__`, `__builtins__`) and `open` on a path outside the scratch folder.
The sandbox enforces the same rules again at run time.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["Violation", "check_source", "DEFAULT_ALLOWED_IMPORTS", "NETWORK_IMPORTS"]

DEFAULT_ALLOWED_IMPORTS = frozenset({
    "json", "math", "re", "datetime", "time", "random", "string", "itertools", "functools", "collections",
    "statistics", "decimal", "fractions", "typing", "dataclasses", "enum", "uuid", "hashlib", "base64",
    "textwrap", "unicodedata", "html", "csv", "copy", "operator", "bisect", "heapq", "difflib", "zlib",
    "pydantic", "urllib.parse", "calendar", "zoneinfo", "secrets", "hmac", "struct", "binascii", "pprint",
})
NETWORK_IMPORTS = frozenset({"httpx"})
BANNED_CALLS = {
    "eval": "dynamic code", "exec": "dynamic code", "compile": "dynamic code", "__import__": "dynamic import",
    "getattr": "introspection", "setattr": "introspection", "delattr": "introspection", "vars": "introspection",
    "globals": "introspection", "locals": "introspection", "dir": "introspection", "breakpoint": "debugger",
    "input": "interactive input", "memoryview": "raw memory", "exit": "process control", "quit": "process control",
    "help": "interactive help",
}
ALLOWED_DUNDERS = {"__name__", "__doc__", "__init__", "__repr__", "__str__", "__eq__", "__hash__", "__len__",
                   "__iter__", "__next__", "__enter__", "__exit__", "__post_init__", "__lt__", "__le__", "__gt__",
                   "__ge__", "__contains__", "__getitem__", "__call__", "__bool__", "__future__"}


@dataclass
class Violation:
    line: int
    rule: str
    message: str

    def as_dict(self) -> dict[str, object]:
        return {"line": self.line, "rule": self.rule, "message": self.message}


def _allowed(module: str, allowed: frozenset[str]) -> bool:
    parts = module.split(".")
    return any(".".join(parts[:i]) in allowed for i in range(1, len(parts) + 1))


def check_source(source: str, actions: list[str], *, allowed_imports: frozenset[str] = DEFAULT_ALLOWED_IMPORTS,
                 network: bool = False) -> list[Violation]:
    """Every policy violation in `source` (empty when the code may be stored)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [Violation(exc.lineno or 0, "syntax", f"syntax error: {exc.msg}")]
    allowed = allowed_imports | (NETWORK_IMPORTS if network else frozenset())
    out: list[Violation] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _allowed(alias.name, allowed):
                    out.append(Violation(line, "import-not-allowed", _import_message(alias.name, network)))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or not _allowed(module, allowed):
                out.append(Violation(line, "import-not-allowed", _import_message(module or ".", network)))
        elif isinstance(node, ast.Name) and node.id in BANNED_CALLS:
            out.append(Violation(line, f"banned-{BANNED_CALLS[node.id].replace(' ', '-')}",
                                 f"`{node.id}` is not allowed in runtime tools ({BANNED_CALLS[node.id]})"))
        elif isinstance(node, ast.Name) and node.id.startswith("__") and node.id not in ALLOWED_DUNDERS:
            out.append(Violation(line, "dunder-access", f"`{node.id}` is not allowed (interpreter internals)"))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr not in ALLOWED_DUNDERS:
            out.append(Violation(line, "dunder-access", f"attribute `{node.attr}` is not allowed (interpreter "
                                                        "internals such as __subclasses__, __globals__)"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and (
                    first.value.startswith(("/", "~")) or ".." in first.value.split("/")):
                out.append(Violation(line, "open-outside-scratch",
                                     f"open({first.value!r}) reaches outside the sandbox's scratch folder"))
    runs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "run"]
    if not runs:
        out.append(Violation(1, "interface", "the module must define a top-level function run(action, params)"))
    elif len(runs[0].args.args) < 2 and not runs[0].args.vararg:
        out.append(Violation(runs[0].lineno, "interface", "run must accept (action, params)"))
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    for action in actions:
        if action not in strings:
            out.append(Violation(1, "interface", f"declared action {action!r} does not appear in the code; "
                                                 "run() must handle it"))
    return sorted(out, key=lambda v: (v.line, v.rule))


def _import_message(module: str, network: bool) -> str:
    hint = "" if network or module not in NETWORK_IMPORTS else " (set network: true in the definition)"
    return f"import of {module!r} is not allowed{hint}; allowed: standard pure-Python modules such as json, re, " \
           "math, datetime, collections, and pydantic"
