"""A tool that fails with a retryable error until it has been tried `succeed_on` times."""

from pathlib import Path

from registry.definitions import Params, ToolSpec
from toolfleet.errors import RetryableError
from toolfleet.settings import get_settings


class TryParams(Params):
    key: str
    succeed_on: int = 3


TOOL = ToolSpec("flaky", "Fails with a retryable error a few times, then succeeds", "internal",
                actions={"try": TryParams}, time_limit_s=10)


def run(action: str, params: dict) -> dict:
    p = TryParams.model_validate(params)
    counter = Path(get_settings().workspace_dir) / f"flaky-{p.key}"
    counter.parent.mkdir(parents=True, exist_ok=True)
    n = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(n))
    if n < p.succeed_on:
        raise RetryableError(f"dependency not ready (try {n})", delay=0.2)
    return {"tries": n}
