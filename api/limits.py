"""Request size limit: bodies over TOOLFLEET_MAX_REQUEST_BYTES are refused with 413 before they are read."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["install_body_limit"]


class _BodyLimit:
    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(send, self.limit)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    import json

    body = json.dumps({"error": "request_too_large",
                       "detail": f"the request body is over {limit} bytes (TOOLFLEET_MAX_REQUEST_BYTES)"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def install_body_limit(app: FastAPI, limit: int) -> None:
    app.add_middleware(_BodyLimit, limit=limit)
