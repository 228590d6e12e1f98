"""The plan runner: explicit states, legal transitions, and an event-driven `advance`.

States: READY, PLANNING, REVIEW, EXECUTING, VERIFYING, FIXING, DONE, FAILED, CANCELLED.
`advance(plan_id)` runs under a row lock and is idempotent; it is called when a plan starts, on
approve and fix, and by the `toolfleet.plan_advance` task a worker sends whenever a plan's step
finishes (and, as a safety net, periodically by internal workers). Nothing blocks on a result.
"""

from __future__ import annotations

import uuid
from typing import Any

from celery import Celery
from psycopg.types.json import Jsonb

from registry.db import Conn
from registry.definitions import ToolDefinition
from registry.plan_spec import REF_RE, PlanError, Registry, normalise_blocks
from registry.tools import upsert_tool
from toolfleet.errors import Forbidden, ToolfleetError
from workers.dispatch import allowed_for_key, prepare, send

__all__ = ["PlanStateError", "PlanNotFound", "create_plan", "advance", "approve", "reject", "fix", "cancel", "get_plan",
           "save_as_tool", "list_plans", "REVIEW_MODES"]

REVIEW_MODES = ("none", "before_each_block", "after_each_block")
FINAL = ("DONE", "FAILED", "CANCELLED")


class PlanStateError(ToolfleetError):
    """The request is not legal in the plan's current state (answered 409)."""

    def __init__(self, plan_id: str, status: str, wanted: str, allowed: tuple[str, ...]) -> None:
        super().__init__(f"cannot {wanted} plan {plan_id}: it is {status}; {wanted} is allowed when it is "
                         f"{' or '.join(allowed)}")
        self.status = status


class PlanNotFound(ToolfleetError):
    def __init__(self, plan_id: str) -> None:
        super().__init__(f"no plan with id {plan_id!r}")


def _lock(conn: Conn, plan_id: str) -> dict[str, Any]:
    try:
        key = uuid.UUID(str(plan_id))
    except ValueError:
        raise PlanNotFound(str(plan_id)) from None
    row = conn.execute("SELECT * FROM plans WHERE id = %s FOR UPDATE", (key,)).fetchone()
    if row is None:
        raise PlanNotFound(str(plan_id))
    return row


def _set(conn: Conn, plan_id: Any, **fields: Any) -> None:
    sets = ", ".join(f"{k} = %s" for k in fields)
    values = [Jsonb(v) if isinstance(v, (dict, list)) else v for v in fields.values()]
    conn.execute(f"UPDATE plans SET {sets}, updated_at = now() WHERE id = %s", (*values, plan_id))


def _history(row: dict[str, Any], event: str, **details: Any) -> list[dict[str, Any]]:
    from datetime import UTC, datetime

    return [*row["history"], {"event": event, "at": datetime.now(UTC).isoformat(), "status_before": row["status"],
                              **details}]


def _authorize(reg: Registry, blocks: list[dict[str, Any]], key: dict[str, Any] | None) -> None:
    for b, block in enumerate(blocks):
        for i, step in enumerate(block["steps"]):
            refusal = allowed_for_key(key, step["tool"], reg.tools[step["tool"]].category)
            if refusal:
                raise Forbidden(f"block {b} step {i}: {refusal}")


def create_plan(conn: Conn, app: Celery, *, goal: str, blocks: Any, review: str,
                key: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validate and store a plan; start it unless it waits for review. Raises PlanError (422)."""
    if review not in REVIEW_MODES:
        raise PlanError(f"review must be one of {', '.join(REVIEW_MODES)}")
    reg = Registry(conn)
    normal = normalise_blocks(blocks, reg)
    _authorize(reg, normal, key)
    plan_id = uuid.uuid4()
    status = "REVIEW" if review == "before_each_block" else "EXECUTING"
    with conn.transaction():
        conn.execute("INSERT INTO plans (id, goal, status, review, blocks, history) VALUES (%s, %s, %s, %s, %s, %s)",
                     (plan_id, goal, "READY", review, Jsonb(normal), Jsonb([])))
        row = _lock(conn, str(plan_id))
        _set(conn, plan_id, status=status, history=_history(row, "submitted", blocks=len(normal)))
    if status == "EXECUTING":
        advance(conn, app, str(plan_id))
    return get_plan(conn, str(plan_id))


def _steps(conn: Conn, plan_id: Any, generation: int, block: int) -> list[dict[str, Any]]:
    return conn.execute(
        """
        SELECT s.*, e.status AS execution_status, e.output, e.error AS execution_error
        FROM plan_steps s LEFT JOIN executions e ON e.id = s.execution_id
        WHERE s.plan_id = %s AND s.generation = %s AND s.block_index = %s ORDER BY s.step_index
        """, (plan_id, generation, block)).fetchall()


def _output_of(conn: Conn, row: dict[str, Any], block: int, step: int) -> Any:
    """The output of a step that ran in this plan (latest generation that ran that block)."""
    found = conn.execute(
        """
        SELECT e.output FROM plan_steps s JOIN executions e ON e.id = s.execution_id
        WHERE s.plan_id = %s AND s.block_index = %s AND s.step_index = %s AND e.status = 'succeeded'
        ORDER BY s.generation DESC LIMIT 1
        """, (row["id"], block, step)).fetchone()
    return None if found is None else found["output"]


def _resolve(conn: Conn, row: dict[str, Any], block: int, value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            m = REF_RE.match(value["$ref"])
            assert m is not None
            rb = int(m.group(1)) if m.group(1) is not None else block
            out = _output_of(conn, row, rb, int(m.group(2)))
            for part in (m.group(3) or "").split(".") if m.group(3) else []:
                if isinstance(out, dict) and part in out:
                    out = out[part]
                elif isinstance(out, list) and part.isdigit() and int(part) < len(out):
                    out = out[int(part)]
                else:
                    raise PlanError(f"block {block}: $ref {value['$ref']!r}: the output has no {part!r}")
            return out
        return {k: _resolve(conn, row, block, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(conn, row, block, v) for v in value]
    return value


def advance(conn: Conn, app: Celery, plan_id: str) -> str:
    """Move the plan as far as it can go now; answers its status.

    Steps are inserted under the plan's lock and their messages sent after the commit, so a worker
    never receives a message for a row it cannot see yet."""
    outbox: list[dict[str, Any]] = []
    status = _advance_locked(conn, plan_id, outbox)
    failed = False
    for row in outbox:
        try:
            send(conn, app, row)
        except ToolfleetError:
            failed = True  # the row is now failed; the next pass marks the plan FAILED
    if failed:
        status = _advance_locked(conn, plan_id, [])
    return status


def _advance_locked(conn: Conn, plan_id: str, outbox: list[dict[str, Any]]) -> str:
    with conn.transaction():
        row = _lock(conn, plan_id)
        while row["status"] == "EXECUTING":
            b, gen = row["current_block"], row["generation"]
            block = row["blocks"][b]
            steps = _steps(conn, row["id"], gen, b)
            if not steps:  # the block starts: materialise its steps
                for i, s in enumerate(block["steps"]):
                    conn.execute(
                        "INSERT INTO plan_steps (plan_id, generation, block_index, step_index, tool, action, params, "
                        "target, depends_on) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (row["id"], gen, b, i, s["tool"], s["action"], Jsonb(s["params"]), s["target"],
                         s["depends_on"]))
                steps = _steps(conn, row["id"], gen, b)
            state = {s["step_index"]: (s["execution_status"] or s["status"]) for s in steps}
            bad = [s for s in steps if state[s["step_index"]] in ("failed", "timed_out", "cancelled")]
            if bad:
                s = bad[0]
                error = {"block": b, "step": s["step_index"], "tool": s["tool"], "action": s["action"],
                         "status": state[s["step_index"]], "execution_id": str(s["execution_id"] or ""),
                         "error": s["execution_error"] or s["error"]}
                _set(conn, row["id"], status="FAILED", error=error,
                     history=_history(row, "block_failed", block=b, step=s["step_index"]))
                return "FAILED"
            if all(state[i] == "succeeded" for i in state):
                last = b + 1 == len(row["blocks"])
                if row["review"] == "after_each_block":
                    _set(conn, row["id"], status="VERIFYING", history=_history(row, "block_done", block=b))
                    return "VERIFYING"
                if last:
                    conn.execute("UPDATE plans SET status = 'DONE', finished_at = now(), updated_at = now(), "
                                 "history = %s WHERE id = %s", (Jsonb(_history(row, "done")), row["id"]))
                    return "DONE"
                nxt = "REVIEW" if row["review"] == "before_each_block" else "EXECUTING"
                _set(conn, row["id"], current_block=b + 1, status=nxt, history=_history(row, "block_done", block=b))
                row = _lock(conn, plan_id)
                continue
            for s in steps:  # submit every pending step whose dependencies succeeded
                if s["status"] != "pending" or not all(state.get(d) == "succeeded" for d in s["depends_on"]):
                    continue
                try:
                    params = _resolve(conn, row, b, s["params"])
                    execution, _ = prepare(conn, tool_name=s["tool"], action=s["action"], params=params,
                                           target=s["target"], plan=(str(row["id"]), b, s["step_index"]))
                    outbox.append(execution)
                    conn.execute("UPDATE plan_steps SET status = 'queued', execution_id = %s WHERE plan_id = %s "
                                 "AND generation = %s AND block_index = %s AND step_index = %s",
                                 (execution["id"], row["id"], gen, b, s["step_index"]))
                except ToolfleetError as exc:
                    conn.execute("UPDATE plan_steps SET status = 'failed', error = %s WHERE plan_id = %s "
                                 "AND generation = %s AND block_index = %s AND step_index = %s",
                                 (Jsonb({"type": type(exc).__name__, "message": str(exc)}), row["id"], gen, b,
                                  s["step_index"]))
                    _set(conn, row["id"], status="FAILED",
                         error={"block": b, "step": s["step_index"], "tool": s["tool"], "action": s["action"],
                                "status": "failed", "error": {"type": type(exc).__name__, "message": str(exc)}},
                         history=_history(row, "step_refused", block=b, step=s["step_index"]))
                    return "FAILED"
            return "EXECUTING"
        return str(row["status"])


def approve(conn: Conn, app: Celery, plan_id: str) -> dict[str, Any]:
    with conn.transaction():
        row = _lock(conn, plan_id)
        if row["status"] == "REVIEW":
            _set(conn, row["id"], status="EXECUTING", history=_history(row, "approved", block=row["current_block"]))
        elif row["status"] == "VERIFYING":
            b = row["current_block"]
            if b + 1 == len(row["blocks"]):
                conn.execute("UPDATE plans SET status = 'DONE', finished_at = now(), updated_at = now(), history = %s "
                             "WHERE id = %s", (Jsonb(_history(row, "verified", block=b)), row["id"]))
            else:
                _set(conn, row["id"], status="EXECUTING", current_block=b + 1,
                     history=_history(row, "verified", block=b))
        else:
            raise PlanStateError(plan_id, row["status"], "approve", ("REVIEW", "VERIFYING"))
    advance(conn, app, plan_id)
    return get_plan(conn, plan_id)


def reject(conn: Conn, plan_id: str, feedback: str) -> dict[str, Any]:
    with conn.transaction():
        row = _lock(conn, plan_id)
        if row["status"] not in ("REVIEW", "VERIFYING"):
            raise PlanStateError(plan_id, row["status"], "reject", ("REVIEW", "VERIFYING"))
        _set(conn, row["id"], status="FIXING",
             history=_history(row, "rejected", block=row["current_block"], feedback=feedback))
    return get_plan(conn, plan_id)


def fix(conn: Conn, app: Celery, plan_id: str, *, from_block: int, blocks: Any, feedback: str = "",
        key: dict[str, Any] | None = None) -> dict[str, Any]:
    """Replace block `from_block` and everything after it, keep the history of what ran, and resume."""
    with conn.transaction():
        row = _lock(conn, plan_id)
        allowed = ("FAILED", "FIXING", "REVIEW", "VERIFYING")
        if row["status"] not in allowed:
            raise PlanStateError(plan_id, row["status"], "fix", allowed)
        if not 0 <= from_block <= min(row["current_block"], len(row["blocks"]) - 1):
            raise PlanError(f"from_block {from_block} is out of range: it must be between 0 and the current block "
                            f"{row['current_block']} (blocks after it have not run and can be replaced from there)")
        kept = row["blocks"][:from_block]
        reg = Registry(conn)
        new = normalise_blocks(blocks, reg, offset=from_block, earlier_sizes=[len(b["steps"]) for b in kept])
        _authorize(reg, new, key)
        status = "REVIEW" if row["review"] == "before_each_block" else "EXECUTING"
        _set(conn, row["id"], blocks=kept + new, current_block=from_block, generation=row["generation"] + 1,
             status=status, error=None, history=_history(row, "fixed", from_block=from_block, feedback=feedback,
                                                         replaced=len(row["blocks"]) - from_block, added=len(new)))
    advance(conn, app, plan_id)
    return get_plan(conn, plan_id)


def cancel(conn: Conn, app: Celery, plan_id: str) -> dict[str, Any]:
    """Stop queued steps, ask running ones to stop; every step ends in a final state."""
    with conn.transaction():
        row = _lock(conn, plan_id)
        if row["status"] in FINAL:
            raise PlanStateError(plan_id, row["status"], "cancel", ("READY", "REVIEW", "EXECUTING", "VERIFYING",
                                                                     "FIXING"))
        ids = [r["id"] for r in conn.execute(
            "UPDATE executions SET status = 'cancelled', finished_at = clock_timestamp(), error = %s "
            "WHERE plan_id = %s AND status IN ('queued', 'running') RETURNING id",
            (Jsonb({"type": "Cancelled", "message": "the plan was cancelled", "traceback": None}), row["id"]))]
        conn.execute("UPDATE plan_steps SET status = 'cancelled' WHERE plan_id = %s AND status = 'pending'",
                     (row["id"],))
        conn.execute("UPDATE plans SET status = 'CANCELLED', finished_at = now(), updated_at = now(), history = %s "
                     "WHERE id = %s", (Jsonb(_history(row, "cancelled", stopped=len(ids))), row["id"]))
    for execution_id in ids:  # queued: never started; running: the pool process is told to stop
        app.control.revoke(str(execution_id), terminate=True, signal="SIGUSR1")
    return get_plan(conn, plan_id)


def get_plan(conn: Conn, plan_id: str) -> dict[str, Any]:
    try:
        key = uuid.UUID(str(plan_id))
    except ValueError:
        raise PlanNotFound(str(plan_id)) from None
    row = conn.execute("SELECT * FROM plans WHERE id = %s", (key,)).fetchone()
    if row is None:
        raise PlanNotFound(str(plan_id))
    steps = conn.execute(
        """
        SELECT s.generation, s.block_index, s.step_index, s.tool, s.action, s.params, s.target, s.depends_on,
               s.status AS step_status, s.error AS step_error, s.execution_id,
               e.status, e.output, e.error, e.duration_ms, e.worker, e.attempts
        FROM plan_steps s LEFT JOIN executions e ON e.id = s.execution_id
        WHERE s.plan_id = %s ORDER BY s.generation, s.block_index, s.step_index
        """, (key,)).fetchall()
    ran = [{**{k: v for k, v in s.items() if k not in ("status", "step_status", "step_error")},
            "execution_id": str(s["execution_id"]) if s["execution_id"] else None,
            "status": s["status"] or s["step_status"], "error": s["error"] or s["step_error"]} for s in steps]
    blocks = []
    for b, block in enumerate(row["blocks"]):
        latest = [s for s in ran if s["block_index"] == b and s["generation"] == max(
            (x["generation"] for x in ran if x["block_index"] == b), default=-1)]
        blocks.append({"index": b, "kind": block["kind"], "source": block["source"], "steps": latest or [
            {**s, "status": "pending", "execution_id": None} for s in block["steps"]]})
    return {"plan_id": str(row["id"]), "goal": row["goal"], "status": row["status"], "review": row["review"],
            "current_block": row["current_block"], "generation": row["generation"], "blocks": blocks,
            "history": row["history"], "trace": ran, "error": row["error"],
            "created_at": row["created_at"].isoformat(), "updated_at": row["updated_at"].isoformat(),
            "finished_at": row["finished_at"].isoformat() if row["finished_at"] else None}


def list_plans(conn: Conn, status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, goal, status, current_block, jsonb_array_length(blocks) AS blocks, created_at, updated_at "
        "FROM plans WHERE %s::text IS NULL OR status = %s ORDER BY created_at DESC LIMIT %s",
        (status, status, limit)).fetchall()
    return [{**r, "plan_id": str(r.pop("id")), "created_at": r["created_at"].isoformat(),
             "updated_at": r["updated_at"].isoformat()} for r in rows]


def _parameterise(value: Any, names: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            return value
        return {k: ("{" + k + "}" if k in names and names[k] is None else _parameterise(v, names))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_parameterise(v, names) for v in value]
    for name, given in names.items():
        if given is not None and value == given:
            return "{" + name + "}"
        if given is not None and isinstance(value, str) and isinstance(given, str) and given and given in value:
            value = value.replace(given, "{" + name + "}")
    return value


def save_as_tool(conn: Conn, plan_id: str, *, name: str, parameters: list[str] | dict[str, Any],
                 description: str = "") -> ToolDefinition:
    """Turn a finished plan's successful trace into a composite tool (failed-and-fixed steps dropped)."""
    plan = get_plan(conn, plan_id)
    if plan["status"] != "DONE":
        raise PlanStateError(plan_id, plan["status"], "save_as_tool", ("DONE",))
    names = {p: None for p in parameters} if isinstance(parameters, list) else dict(parameters)
    body = []
    for block in plan["blocks"]:
        for s in block["steps"]:
            if s["status"] != "succeeded":
                continue
            step: dict[str, Any] = {"tool": s["tool"], "action": s["action"], "params": _parameterise(s["params"],
                                                                                                    names)}
            if s.get("target"):
                step["target"] = s["target"]
            body.append(step)
    if any("$ref" in str(s["params"]) for s in body):
        raise PlanError("the trace passes outputs between steps ($ref); composite tools run steps in order "
                        "without $ref yet, so this plan cannot be saved as a tool")
    used = {n for n in names if any("{" + n + "}" in str(s["params"]) for s in body)}
    unused = sorted(set(names) - used)
    if unused:
        raise PlanError(f"parameters {unused} match nothing in the plan's steps; name params the steps use")
    schema = {"type": "object", "required": sorted(names), "properties": {n: {} for n in sorted(names)}}
    definition = ToolDefinition(name=name, description=description or plan["goal"] or f"saved from plan {plan_id}",
                                category="composite", actions=["run"], run_file=f"{name}.plan", run_type="composite",
                                module="", params_schemas={"run": schema}, body=body)
    if conn.execute("SELECT 1 FROM tools WHERE name = %s", (name,)).fetchone():
        raise PlanError(f"a tool named {name!r} exists; choose another name")
    return upsert_tool(conn, definition)
