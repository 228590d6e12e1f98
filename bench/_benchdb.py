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
