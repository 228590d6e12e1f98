"""A throwaway embedded Postgres for benchmarks, migrated, stopped on exit."""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def bench_database() -> Iterator[str]:
    from registry.migrate import migrate
    from toolfleet.services import EmbeddedPostgres
    from toolfleet.settings import get_settings

    tmp = Path(tempfile.mkdtemp(prefix="toolfleet-bench-"))
    print(f"starting an embedded Postgres in {tmp} ...", flush=True)
    pg = EmbeddedPostgres(tmp / "postgres", free_port(), extra_options="-c fsync=off -c maintenance_work_mem=512MB")
    pg.start(progress=False)
    os.environ["DATABASE_URL"] = pg.url
    os.environ["TOOLFLEET_STATE_DIR"] = str(tmp)
    get_settings.cache_clear()
    try:
        migrate(pg.url)
        yield pg.url
    finally:
        pg.stop()


@contextmanager
def bench_stack(workers: list[list[str]], env_extra: dict[str, str] | None = None) -> Iterator[tuple[str, Path]]:
    """Embedded Postgres + redis-server, migrated, an API and the given `toolfleet worker` argument lists;
    answers (API base URL, temp folder) once the API sees a worker; stops everything afterwards."""
    import subprocess
    import time

    import httpx
    from dispatch import spawn, stop  # noqa: I001 - sibling module of the benchmarks

    from registry.migrate import migrate
    from toolfleet.services import EmbeddedPostgres, EmbeddedRedis
    from toolfleet.settings import get_settings

    tmp = Path(tempfile.mkdtemp(prefix="toolfleet-bench-"))
    print(f"starting embedded Postgres and Redis in {tmp} ...", flush=True)
    pg = EmbeddedPostgres(tmp / "postgres", free_port())
    pg.start(progress=False)
    broker = EmbeddedRedis(tmp, free_port())
    broker.start()
    env = {**os.environ, "DATABASE_URL": pg.url, "BROKER_URL": broker.url, "TOOLFLEET_STATE_DIR": str(tmp),
           "TOOLFLEET_PRELOAD_EMBEDDER": "false", **(env_extra or {})}
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "BROKER_URL", "TOOLFLEET_STATE_DIR")})
    get_settings.cache_clear()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        migrate(pg.url)
        port = free_port()
        procs.append(spawn([sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--port", str(port),
                            "--log-level", "warning"], env, tmp / "api.log"))
        for i, args in enumerate(workers):
            procs.append(spawn([sys.executable, "-m", "toolfleet", "worker", "--loglevel", "WARNING", *args], env,
                               tmp / f"worker{i}.log"))
        base = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/health").json()["workers"] >= min(1, len(workers)):
                    break
            except (httpx.HTTPError, KeyError, ValueError):
                pass
            time.sleep(0.1)
        else:
            raise SystemExit(f"the API or workers did not start; see {tmp}")
        yield base, tmp
    finally:
        for proc in procs:
            stop(proc)
        broker.stop()
        pg.stop()
