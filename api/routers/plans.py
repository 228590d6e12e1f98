"""`/api/plans`: submit, inspect, approve, reject, fix, cancel plans and save them as tools."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from api.deps import CeleryDep, DbDep, EmbedderDep, KeyDep
from registry.definitions import NAME_PATTERN
from registry.discovery import refresh_search
from workers import plans

__all__ = ["router"]

router = APIRouter(prefix="/api/plans", tags=["plans"])


class PlanCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    goal: str = Field(default="", max_length=4000)
    blocks: list[Any] = Field(min_length=1, max_length=200)
    review: Literal["none", "before_each_block", "after_each_block"] = "none"


class Feedback(BaseModel):
    model_config = ConfigDict(extra="forbid")

    feedback: str = Field(default="", max_length=10_000)


class Fix(BaseModel):
    model_config = ConfigDict(extra="forbid")

    from_block: int = Field(ge=0)
    blocks: list[Any] = Field(min_length=1, max_length=200)
    feedback: str = Field(default="", max_length=10_000)


class SaveAsTool(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    parameters: list[str] | dict[str, Any] = Field(default_factory=list,
                                                   description="param names to expose, or name -> value to replace")
    description: str = Field(default="", max_length=4000)


@router.post("", status_code=202, summary="Submit a plan (validated whole before anything runs)")
async def create(body: PlanCreate, conn: DbDep, celery: CeleryDep, key: KeyDep) -> dict[str, Any]:
    plan = await run_in_threadpool(plans.create_plan, conn, celery, goal=body.goal, blocks=body.blocks,
                                   review=body.review, key=key)
    return {**plan, "url": f"/api/plans/{plan['plan_id']}"}


@router.get("", summary="Recent plans")
def list_(conn: DbDep, status: str | None = None, limit: int = Query(default=50, ge=1, le=500)) -> dict[str, Any]:
    return {"plans": plans.list_plans(conn, status, limit)}


@router.get("/{plan_id}", summary="A plan: blocks, each step's execution, history, state")
def get(plan_id: str, conn: DbDep) -> dict[str, Any]:
    return plans.get_plan(conn, plan_id)


@router.post("/{plan_id}/approve", summary="Approve the block under review (or verified) and go on")
def approve(plan_id: str, conn: DbDep, celery: CeleryDep) -> dict[str, Any]:
    return plans.approve(conn, celery, plan_id)


@router.post("/{plan_id}/reject", summary="Reject the block under review/verification; the plan waits for a fix")
def reject(plan_id: str, body: Feedback, conn: DbDep) -> dict[str, Any]:
    return plans.reject(conn, plan_id, body.feedback)


@router.post("/{plan_id}/fix", summary="Replace block from_block and the rest, keep the history, resume")
def fix(plan_id: str, body: Fix, conn: DbDep, celery: CeleryDep, key: KeyDep) -> dict[str, Any]:
    return plans.fix(conn, celery, plan_id, from_block=body.from_block, blocks=body.blocks, feedback=body.feedback,
                     key=key)


@router.post("/{plan_id}/cancel", summary="Stop queued steps, ask running ones to stop")
def cancel(plan_id: str, conn: DbDep, celery: CeleryDep) -> dict[str, Any]:
    return plans.cancel(conn, celery, plan_id)


@router.post("/{plan_id}/save_as_tool", status_code=201, summary="Save a finished plan's trace as a composite tool")
def save_as_tool(plan_id: str, body: SaveAsTool, conn: DbDep, embedder: EmbedderDep) -> dict[str, Any]:
    tool = plans.save_as_tool(conn, plan_id, name=body.name, parameters=body.parameters,
                              description=body.description)
    refresh_search(conn, [tool], embedder.get())
    return tool.model_dump()
