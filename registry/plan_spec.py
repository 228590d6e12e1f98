"""Plan blocks, checked before anything runs: normalise lazy step JSON, expand composite tools,
validate tools, actions, params, `depends_on` and `$ref`s. Every error names its block and step.

A block is `{"call_tool": NAME, "action"?: ..., "params": {...}}` or `{"primitive_block": [step, ...]}`. A step is
`{"tool", "action", "params", "target"?, "id"?, "depends_on"?}`; shorthand is accepted:
`{"browser": "screenshot"}`, `{"press_key": "enter"}` (action `press`, param `key`), `{"action": "click", ...}`
(the tool of the previous step). Without `depends_on` a step runs after the previous one;
`"depends_on": []` makes it independent, so steps run in parallel. `{"$ref": "steps.N.output.path"}` (this
block) or `{"$ref": "blocks.B.steps.N.output.path"}` (an earlier block) feeds an output into a param.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from registry.db import Conn
from registry.definitions import ToolDefinition
from registry.tools import list_tools

__all__ = ["PlanError", "Step", "Registry", "normalise_blocks", "substitute", "MAX_DEPTH", "REF_RE"]

MAX_DEPTH = 8
META = {"target", "depends_on", "id"}
REF_RE = re.compile(r"^(?:blocks\.(\d+)\.)?steps\.(\d+)\.output(?:\.(.+))?$")


class PlanError(ValueError):
    """A plan that cannot run as submitted; the message names the block and step."""


@dataclass
class Step:
    tool: str
    action: str
    params: dict[str, Any]
    target: str | None
    depends_on: list[int]

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "action": self.action, "params": self.params, "target": self.target,
                "depends_on": self.depends_on}


class Registry:
    """The tool definitions, loaded once per plan submission."""

    def __init__(self, conn: Conn) -> None:
        self.tools: dict[str, ToolDefinition] = {t.name: t for t in list_tools(conn)}

    def get(self, name: str, where: str) -> ToolDefinition:
        if name not in self.tools:
            raise PlanError(f"{where}: unknown tool {name!r}")
        return self.tools[name]

    def with_action(self, action: str) -> list[ToolDefinition]:
        return [t for t in self.tools.values() if action in t.actions]


def _params_of(tool: ToolDefinition, action: str) -> set[str]:
    return set(tool.schema_for(action).get("properties", {}))


def _normalise_step(raw: Any, reg: Registry, default_tool: str | None, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict) or not raw:
        raise PlanError(f"{where}: a step must be a JSON object, got {raw!r}")
    meta = {k: raw[k] for k in META if k in raw}
    body = {k: v for k, v in raw.items() if k not in META}
    if "action" in body:
        tool = body.get("tool") or default_tool
        if tool is None:
            candidates = reg.with_action(body["action"])
            if len(candidates) != 1:
                raise PlanError(f"{where}: step {raw!r} names no tool and action {body['action']!r} is not unique "
                                "to one tool; add \"tool\"")
            tool = candidates[0].name
        extra = set(body) - {"tool", "action", "params"}
        if extra:
            raise PlanError(f"{where}: unknown keys {sorted(extra)} in step {raw!r}")
        return {"tool": tool, "action": body["action"], "params": body.get("params") or {}, **meta}
    if len(body) != 1:
        raise PlanError(f"{where}: cannot understand step {raw!r}; write "
                        "{\"tool\": ..., \"action\": ..., \"params\": {...}}")
    key, value = next(iter(body.items()))
    if key in reg.tools:  # {"browser": "screenshot"} or {"browser": {"action": ..., "params": ...}}
        if isinstance(value, str):
            return {"tool": key, "action": value, "params": {}, **meta}
        if isinstance(value, dict) and "action" in value:
            return {"tool": key, "action": value["action"], "params": value.get("params") or {}, **meta}
        raise PlanError(f"{where}: step {raw!r}: after a tool name give an action name")
    # {"<action>": {params}} or {"<action>_<param>": value}, on the previous step's tool or the only tool with it
    order = ([reg.tools[default_tool]] if default_tool in reg.tools else []) + list(reg.tools.values())
    for tool_def in order:
        if key in tool_def.actions and (isinstance(value, dict) or value is None):
            return {"tool": tool_def.name, "action": key, "params": value or {}, **meta}
        for action in tool_def.actions:
            if key.startswith(action + "_") and key[len(action) + 1:] in _params_of(tool_def, action):
                return {"tool": tool_def.name, "action": action, "params": {key[len(action) + 1:]: value}, **meta}
    raise PlanError(f"{where}: cannot normalise step {raw!r}: {key!r} is neither a tool, nor an action, nor "
                    "<action>_<param> of a registered tool")


def substitute(value: Any, params: dict[str, Any], where: str) -> Any:
    """Replace `{name}` templates: a whole-string template keeps the value's type."""
    if isinstance(value, str):
        whole = re.fullmatch(r"\{(\w+)\}", value)
        if whole:
            if whole.group(1) not in params:
                raise PlanError(f"{where}: template {value!r} names no parameter; given: {sorted(params)}")
            return params[whole.group(1)]

        def repl(m: re.Match[str]) -> str:
            if m.group(1) not in params:
                raise PlanError(f"{where}: template {{{m.group(1)}}} names no parameter; given: {sorted(params)}")
            return str(params[m.group(1)])

        return re.sub(r"\{(\w+)\}", repl, value)
    if isinstance(value, list):
        return [substitute(v, params, where) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            return value
        return {k: substitute(v, params, where) for k, v in value.items()}
    return value


def _expand(name: str, params: dict[str, Any], reg: Registry, stack: list[str], where: str,
            action: str | None = None) -> list[dict[str, Any]]:
    """The primitive steps of tool `name` called with `params` (composite tools expand recursively)."""
    tool = reg.get(name, where)
    if tool.run_type != "composite":
        if action is None and len(tool.actions) != 1:
            raise PlanError(f"{where}: call_tool {name!r} has several actions ({', '.join(tool.actions)}); "
                            "add \"action\"")
        return [{"tool": name, "action": action or tool.actions[0], "params": params}]
    if name in stack:
        raise PlanError(f"{where}: composite tools call each other in a cycle: {' -> '.join(stack + [name])}")
    if len(stack) >= MAX_DEPTH:
        raise PlanError(f"{where}: composite tools nest deeper than {MAX_DEPTH}: {' -> '.join(stack + [name])}")
    missing = [p for p in tool.schema_for("run").get("required", []) if p not in params]
    if missing:
        raise PlanError(f"{where}: call_tool {name!r} needs params {missing}")
    steps: list[dict[str, Any]] = []
    previous: str | None = None
    for i, raw in enumerate(tool.body or []):
        inner = f"{where} > {name} step {i}"
        if isinstance(raw, dict) and "call_tool" in raw:
            nested = substitute(raw.get("params") or {}, params, inner)
            steps.extend(_expand(raw["call_tool"], nested, reg, stack + [name], inner, raw.get("action")))
            continue
        step = _normalise_step(raw, reg, previous, inner)
        step["params"] = substitute(step["params"], params, inner)
        step.pop("depends_on", None)  # a composite runs its steps in order
        step.pop("id", None)
        steps.append(step)
        previous = step["tool"]
    return steps


def _validate_params(tool: ToolDefinition, action: str, params: Any, where: str) -> None:
    if action not in tool.actions:
        raise PlanError(f"{where}: tool {tool.name!r} has no action {action!r}; valid actions: "
                        f"{', '.join(tool.actions)}")
    if not tool.enabled:
        raise PlanError(f"{where}: tool {tool.name!r} is disabled")
    if not isinstance(params, dict):
        raise PlanError(f"{where}: params must be a JSON object")
    refs = {k for k, v in params.items() if isinstance(v, dict) and set(v) == {"$ref"}}
    schema = copy.deepcopy(tool.schema_for(action))
    schema["required"] = [r for r in schema.get("required", []) if r not in refs]
    errors = [f"{'.'.join(str(p) for p in e.absolute_path) or '(params)'}: {e.message}"
              for e in Draft202012Validator(schema).iter_errors({k: v for k, v in params.items() if k not in refs})]
    if errors:
        raise PlanError(f"{where}: invalid params for {tool.name}.{action}: {'; '.join(errors)}")


def _deps(steps: list[dict[str, Any]], where: str) -> list[list[int]]:
    ids = {s["id"]: i for i, s in enumerate(steps) if "id" in s}
    out = []
    for i, s in enumerate(steps):
        if "depends_on" not in s:
            out.append([i - 1] if i else [])
            continue
        deps = []
        for d in s["depends_on"]:
            j = ids.get(d, d) if isinstance(d, str) else d
            if not isinstance(j, int) or not 0 <= j < len(steps) or j == i:
                raise PlanError(f"{where} step {i}: depends_on {d!r} is not another step of this block")
            deps.append(j)
        out.append(sorted(set(deps)))
    # refuse cycles (Kahn's algorithm)
    indegree = [len(d) for d in out]
    ready = [i for i, n in enumerate(indegree) if n == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for j, d in enumerate(out):
            if node in d:
                indegree[j] -= 1
                if indegree[j] == 0:
                    ready.append(j)
    if seen != len(steps):
        cyclic = [i for i, n in enumerate(indegree) if n > 0]
        raise PlanError(f"{where}: depends_on forms a cycle among steps {cyclic}")
    return out


def _ancestors(i: int, deps: list[list[int]]) -> set[int]:
    out: set[int] = set()
    todo = list(deps[i])
    while todo:
        j = todo.pop()
        if j not in out:
            out.add(j)
            todo.extend(deps[j])
    return out


def _check_refs(value: Any, b: int, i: int, deps: list[list[int]], sizes: list[int], where: str) -> None:
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            m = REF_RE.match(str(value["$ref"]))
            if not m:
                raise PlanError(f"{where}: $ref {value['$ref']!r} must look like steps.N.output.path or "
                                "blocks.B.steps.N.output.path")
            rb = int(m.group(1)) if m.group(1) is not None else b
            rs = int(m.group(2))
            if rb > b or rb >= len(sizes) or rs >= sizes[rb]:
                raise PlanError(f"{where}: $ref {value['$ref']!r} points to a step that does not exist "
                                "(or comes later)")
            if rb == b and rs not in _ancestors(i, deps):
                raise PlanError(f"{where}: $ref {value['$ref']!r} needs step {rs} to run first; add it to depends_on")
            return
        for v in value.values():
            _check_refs(v, b, i, deps, sizes, where)
    elif isinstance(value, list):
        for v in value:
            _check_refs(v, b, i, deps, sizes, where)


def normalise_blocks(raw_blocks: Any, reg: Registry, offset: int = 0,
                     earlier_sizes: list[int] | None = None) -> list[dict[str, Any]]:
    """Blocks ready to run: `[{"kind", "source", "steps": [Step dicts]}]`, or PlanError."""
    if not isinstance(raw_blocks, list) or not raw_blocks:
        raise PlanError("blocks must be a non-empty list")
    blocks: list[dict[str, Any]] = []
    for n, raw in enumerate(raw_blocks):
        b = offset + n
        where = f"block {b}"
        if not isinstance(raw, dict):
            raise PlanError(f"{where}: a block is an object with call_tool or primitive_block, got {raw!r}")
        if "call_tool" in raw:
            extra = set(raw) - {"call_tool", "action", "params", "target"}
            if extra:
                raise PlanError(f"{where}: unknown keys {sorted(extra)}")
            params = raw.get("params") or {}
            if not isinstance(params, dict):
                raise PlanError(f"{where}: params must be an object")
            steps = _expand(str(raw["call_tool"]), params, reg, [], where, raw.get("action"))
            if raw.get("target"):
                for s in steps:
                    s.setdefault("target", raw["target"])
            kind = "call_tool"
        elif "primitive_block" in raw:
            if set(raw) != {"primitive_block"} or not isinstance(raw["primitive_block"], list) \
                    or not raw["primitive_block"]:
                raise PlanError(f"{where}: primitive_block must be a non-empty list of steps")
            steps, previous = [], None
            for i, step in enumerate(raw["primitive_block"]):
                if isinstance(step, dict) and "call_tool" in step:
                    raise PlanError(f"{where} step {i}: call_tool is a block of its own, not a step")
                normal = _normalise_step(step, reg, previous, f"{where} step {i}")
                steps.append(normal)
                previous = normal["tool"]
            kind = "primitive_block"
        else:
            raise PlanError(f"{where}: a block needs call_tool or primitive_block, got keys {sorted(raw)}")
        blocks.append({"kind": kind, "source": raw, "steps": steps})
    sizes = list(earlier_sizes or []) + [len(bl["steps"]) for bl in blocks]
    for n, block in enumerate(blocks):
        b = offset + n
        deps = _deps(block["steps"], f"block {b}")
        out = []
        for i, s in enumerate(block["steps"]):
            where = f"block {b} step {i}"
            tool = reg.get(s["tool"], where)
            _validate_params(tool, s["action"], s["params"], where)
            _check_refs(s["params"], b, i, deps, sizes, where)
            out.append(Step(s["tool"], s["action"], s["params"], s.get("target"), deps[i]).as_dict())
        block["steps"] = out
    return blocks
