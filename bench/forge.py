"""Sandbox overhead: a no-op runtime tool (separate sandboxed process per execution) vs the built-in
no-op `diag.echo` (in the worker process), same worker, same run.

    .venv/bin/python bench/forge.py [--n 100]

Reports the worker-side duration (claim to record, as stored in duration_ms) and the end-to-end
latency through the API (?wait), median and p95.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchdb import free_port  # noqa: E402
from dispatch import pct, spawn, stop  # noqa: E402

NOOP = "def run(action, params):\n    return {'ok': action == 'noop'}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100)
    args = ap.parse_args()

    from registry.migrate import migrate
    from toolfleet.services import EmbeddedPostgres, EmbeddedRedis
    from toolfleet.settings import get_settings

    tmp = Path(tempfile.mkdtemp(prefix="toolfleet-forge-"))
    print(f"starting embedded Postgres and Redis in {tmp} ...", flush=True)
    pg = EmbeddedPostgres(tmp / "postgres", free_port())
    pg.start(progress=False)
    broker = EmbeddedRedis(tmp, free_port())
    broker.start()
    env = {**os.environ, "DATABASE_URL": pg.url, "BROKER_URL": broker.url, "TOOLFLEET_STATE_DIR": str(tmp),
           "TOOLFLEET_PRELOAD_EMBEDDER": "false"}
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "BROKER_URL", "TOOLFLEET_STATE_DIR")})
    get_settings.cache_clear()
    migrate(pg.url)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        port = free_port()
        procs.append(spawn([sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--port", str(port),
                            "--log-level", "warning"], env, tmp / "api.log"))
        procs.append(spawn([sys.executable, "-m", "toolfleet", "worker", "--category", "internal", "--concurrency",
                            "1", "--loglevel", "WARNING"], env, tmp / "worker.log"))
        c = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
        for _ in range(300):
            try:
                if c.get("/api/health").json()["workers"] >= 1:
                    break
            except (httpx.HTTPError, KeyError):
                pass
            time.sleep(0.1)
        r = c.post("/api/form/tools", json={"name": "noop", "category": "internal", "actions": ["noop"],
                                            "code": NOOP})
        r.raise_for_status()
        rows = []
        for label, tool, action in (("in-process (diag.echo)", "diag", "echo"),
                                    ("sandboxed (runtime no-op)", "noop", "noop")):
            worker_ms, e2e_ms = [], []
            for i in range(args.n + 5):
                t0 = time.perf_counter()
                body = c.post(f"/api/form/tools/{tool}/execute?wait=30", json={"action": action, "params": {}}).json()
                e2e = (time.perf_counter() - t0) * 1000
                assert body["success"], body
                if i >= 5:  # warm-up excluded
                    worker_ms.append(body["duration_ms"])
                    e2e_ms.append(e2e)
            rows.append((label, statistics.median(worker_ms), pct(worker_ms, 95), statistics.median(e2e_ms),
                         pct(e2e_ms, 95)))
            print(f"  {label}: done", flush=True)
        print()
        print(f"{'execution':28} {'worker p50 ms':>13} {'p95':>7} {'API p50 ms':>10} {'p95':>7}")
        for r_ in rows:
            print(f"{r_[0]:28} {r_[1]:13.2f} {r_[2]:7.2f} {r_[3]:10.1f} {r_[4]:7.1f}")
        print(f"sandbox overhead per execution: {rows[1][1] - rows[0][1]:+.1f} ms (worker side)")
    finally:
        for proc in procs:
            stop(proc)
        broker.stop()
        pg.stop()


if __name__ == "__main__":
    main()
