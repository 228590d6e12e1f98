"""Logging set-up: plain text, or JSON lines (TOOLFLEET_LOG_FORMAT=json) carrying the execution's
id, tool, action, plan id and host on every line logged while it runs."""

from __future__ import annotations

import logging
import sys

__all__ = ["configure_logging", "ExecutionFields"]


class ExecutionFields(logging.Filter):
    """Adds execution_id, tool, action, plan_id, host to each record (None outside an execution)."""

    def __init__(self, host: str) -> None:
        super().__init__()
        self.host = host

    def filter(self, record: logging.LogRecord) -> bool:
        from workers.context import current

        ctx = current()
        record.execution_id = ctx.execution_id if ctx else None
        record.tool = ctx.tool if ctx else None
        record.action = ctx.action if ctx else None
        record.plan_id = getattr(ctx, "plan_id", None) if ctx else None
        record.host = self.host
        return True


def configure_logging(level: str, fmt: str, *, host: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ExecutionFields(host))
    if fmt == "json":
        from pythonjsonlogger.json import JsonFormatter

        handler.setFormatter(JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s %(execution_id)s %(tool)s %(action)s %(plan_id)s "
            "%(host)s", rename_fields={"asctime": "time", "levelname": "level", "name": "logger"}))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(tool)s.%(action)s "
                                               "%(execution_id)s] %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
