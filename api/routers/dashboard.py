"""The dashboard page at `/` (static HTML + JS over the JSON API) and `/api/info`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from api.deps import SettingsDep

__all__ = ["router", "STATIC"]

STATIC = Path(__file__).resolve().parents[1] / "static"
router = APIRouter(tags=["dashboard"])


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    return FileResponse(STATIC / "index.html")


@router.get("/api/info", summary="Version and where the companion services are")
def info(settings: SettingsDep) -> dict[str, Any]:
    flower = settings.flower_url or f"http://{settings.api_host}:{settings.flower_port}"
    return {"name": "toolfleet", "version": "0.1.0", "flower_url": flower}
