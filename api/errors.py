"""Map toolfleet errors and request mistakes to clear HTTP answers: `{"error", "detail", ...}`."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from registry.forge import VersionNotFound
from registry.plan_spec import PlanError
from toolfleet import errors as e
from workers.forge import CodeRefused, ForgeConflict, PreflightFailed
from workers.plans import PlanNotFound, PlanStateError

__all__ = ["install_error_handlers"]

log = logging.getLogger("toolfleet.api")

_STATUS: list[tuple[type[e.ToolfleetError], int, str]] = [
    (e.ToolNotFound, 404, "tool_not_found"),
    (e.ExecutionNotFound, 404, "execution_not_found"),
    (e.ActionNotFound, 422, "unknown_action"),
    (e.InvalidParams, 422, "invalid_params"),
    (e.ToolDisabled, 409, "tool_disabled"),
    (e.ToolUnavailable, 409, "tool_unavailable"),
    (e.ServiceUnavailable, 503, "service_unavailable"),
    (e.Backpressure, 429, "too_many_requests"),
    (e.Forbidden, 403, "forbidden"),
    (PlanNotFound, 404, "plan_not_found"),
    (VersionNotFound, 404, "version_not_found"),
    (CodeRefused, 422, "code_refused"),
    (PreflightFailed, 422, "preflight_failed"),
    (ForgeConflict, 409, "conflict"),
    (PlanStateError, 409, "illegal_transition"),
]


def _body(code: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"error": code, "detail": detail, **extra}


def _extra(exc: e.ToolfleetError) -> dict[str, Any]:
    if isinstance(exc, e.ActionNotFound):
        return {"valid_actions": exc.valid}
    if isinstance(exc, e.InvalidParams):
        return {"errors": exc.errors}
    if isinstance(exc, e.ToolUnavailable):
        return {"missing_env": exc.missing_env}
    if isinstance(exc, PlanStateError):
        return {"plan_status": exc.status}
    if isinstance(exc, CodeRefused):
        return {"violations": exc.violations}
    if isinstance(exc, PreflightFailed):
        return {"preflight": exc.error}
    return {}


async def _toolfleet_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, e.ToolfleetError)
    for kind, status, code in _STATUS:
        if isinstance(exc, kind):
            headers = {"Retry-After": "5"} if status == 503 else None
            if isinstance(exc, e.Backpressure):
                headers = {"Retry-After": str(max(1, round(exc.retry_after)))}
            return JSONResponse(_body(code, str(exc), **_extra(exc)), status_code=status, headers=headers)
    log.exception("unmapped toolfleet error", exc_info=exc)
    return JSONResponse(_body("internal_error", str(exc)), status_code=500)


async def _model_error(_: Request, exc: Exception) -> JSONResponse:
    """A definition built inside a handler was invalid: the client's values, so a 422, never a 500."""
    assert isinstance(exc, ValidationError)
    errors = [{"loc": [str(p) for p in err.get("loc", ())], "msg": err.get("msg", "")} for err in exc.errors()]
    detail = "invalid: " + "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors)
    return JSONResponse(_body("invalid_request", detail, errors=errors), status_code=422)


async def _plan_error(_: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(_body("invalid_plan", str(exc)), status_code=422)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"loc": [str(p) for p in err.get("loc", ())], "msg": err.get("msg", ""), "type": err.get("type", "")}
              for err in exc.errors()]
    if any(err["type"] == "json_invalid" for err in errors):
        detail = "the request body is not valid JSON: " + "; ".join(err["msg"] for err in errors)
    else:
        detail = "invalid request: " + "; ".join(f"{'.'.join(err['loc'])}: {err['msg']}" for err in errors)
    return JSONResponse(_body("invalid_request", detail, errors=errors), status_code=422)


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = {404: "not_found", 405: "method_not_allowed", 409: "conflict"}.get(exc.status_code, "http_error")
    return JSONResponse(_body(code, str(exc.detail)), status_code=exc.status_code, headers=exc.headers)


async def _bad_data(_: Request, exc: Exception) -> JSONResponse:
    """Values Postgres cannot store (a NUL byte in text, a number out of range): the client's input."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return JSONResponse(_body("invalid_request", f"a value in the request cannot be stored: {reason}; "
                                                 "remove NUL bytes and out-of-range numbers"), status_code=422)


async def _db_down(_: Request, exc: Exception) -> JSONResponse:
    log.warning("database error: %s", exc)
    return JSONResponse(
        _body("service_unavailable", "Postgres is not reachable right now; nothing was changed. Try again shortly"),
        status_code=503, headers={"Retry-After": "5"},
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(e.ToolfleetError, _toolfleet_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(PlanError, _plan_error)
    app.add_exception_handler(ValidationError, _model_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(psycopg.OperationalError, _db_down)
    app.add_exception_handler(psycopg.DataError, _bad_data)
    try:
        from psycopg_pool import PoolTimeout

        app.add_exception_handler(PoolTimeout, _db_down)
    except ImportError:  # pragma: no cover
        pass
