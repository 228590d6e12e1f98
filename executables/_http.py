"""HTTP helpers for tools: bounded downloads and errors that say what happened."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from toolfleet.errors import ExecutableError, RetryableError, ToolTimeout

__all__ = ["fetch", "post_json"]

USER_AGENT = "toolfleet/0.1 (+https://github.com/toolfleet)"


@contextmanager
def _errors(what: str, verb: str, timeout_s: float) -> Iterator[None]:
    """httpx errors as toolfleet's: timeouts `timed_out`, dropped or refused connections retryable."""
    try:
        yield
    except httpx.TimeoutException:
        raise ToolTimeout(f"{what} did not answer within {timeout_s:g}s") from None
    except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError) as exc:
        # worth another try, with backoff (TOOLFLEET_MAX_RETRIES)
        raise RetryableError(f"could not {verb} {what}: {type(exc).__name__}: {exc}", delay=1.0) from None
    except httpx.HTTPError as exc:
        raise ExecutableError(f"could not {verb} {what}: {type(exc).__name__}: {exc}") from None


def fetch(url: str, *, timeout_s: float, max_bytes: int, headers: dict[str, str] | None = None,
          params: dict[str, Any] | None = None) -> tuple[httpx.Response, bytes]:
    """GET url, reading at most max_bytes; raises ToolTimeout or ExecutableError with the cause."""
    with _errors(url, "fetch", timeout_s), httpx.Client(
            timeout=timeout_s, follow_redirects=True, headers={"user-agent": USER_AGENT, **(headers or {})}) as client:
        with client.stream("GET", url, params=params) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise ExecutableError(f"{url} is larger than max_bytes={max_bytes}; raise the limit or "
                                          "fetch something smaller")
            return response, bytes(body)


def post_json(url: str, payload: Any, *, timeout_s: float, headers: dict[str, str] | None = None,
              what: str = "the webhook") -> httpx.Response:
    """POST JSON; a non-2xx answer raises with its status and the start of its body."""
    with _errors(what, "reach", timeout_s):
        response = httpx.post(url, json=payload, timeout=timeout_s,
                              headers={"user-agent": USER_AGENT, **(headers or {})})
    if response.status_code >= 300:
        raise ExecutableError(f"{what} answered HTTP {response.status_code}: {response.text[:500]}")
    return response
