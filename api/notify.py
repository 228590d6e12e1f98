"""Wait for executions to finish by LISTENing to Postgres, with a slow poll as a safety net."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import AsyncIterator

import psycopg

__all__ = ["ExecutionWaiter"]

log = logging.getLogger("toolfleet.api.notify")

CHANNEL = "toolfleet_executions"


class ExecutionWaiter:
    """One LISTEN connection per API process; `wait(id)` wakes when that execution's status changes."""

    def __init__(self, url: str, poll_interval: float = 1.0) -> None:
        self.url = url
        self.poll_interval = poll_interval
        self._events: dict[str, set[asyncio.Event]] = defaultdict(set)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen(), name="toolfleet-listen")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _listen(self) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    async for note in conn.notifies():
                        execution_id = note.payload.split(":", 1)[0]
                        for event in self._events.get(execution_id, ()):
                            event.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("LISTEN connection lost (%s); polling until it is back", exc)
                await asyncio.sleep(1.0)

    @contextlib.asynccontextmanager
    async def watch(self, execution_id: str) -> AsyncIterator[asyncio.Event]:
        """Register before reading the row, so no notification falls between the read and the wait."""
        event = asyncio.Event()
        self._events[execution_id].add(event)
        try:
            yield event
        finally:
            self._events[execution_id].discard(event)
            if not self._events[execution_id]:
                del self._events[execution_id]

    async def sleep(self, event: asyncio.Event, timeout: float) -> None:
        """Until a notification for the watched id, the poll interval, or `timeout`, whichever is first."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout=min(timeout, self.poll_interval))
        event.clear()
