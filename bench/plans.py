"""Plan overhead: a plan of N no-op steps (one block, run in order) vs N direct executions run one
after another through the API, same run, same worker.

    .venv/bin/python bench/plans.py [--steps 20] [--rounds 5]
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
from dispatch import spawn, stop  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    from registry.migrate import migrate
    from toolfleet.services import EmbeddedPostgres, EmbeddedRedis
    from toolfleet.settings import get_settings

    tmp = Path(tempfile.mkdtemp(prefix="toolfleet-plans-"))
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
                            "2", "--loglevel", "WARNING"], env, tmp / "worker.log"))
        c = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
        for _ in range(300):
            try:
                if c.get("/api/health").json()["workers"] >= 1:
                    break
            except (httpx.HTTPError, KeyError):
                pass
            time.sleep(0.1)
        step = {"tool": "diag", "action": "echo", "params": {"message": "x"}}
        direct_s, plan_s = [], []
        for r in range(args.rounds + 1):  # the first round warms up and is not counted
            t0 = time.perf_counter()
            for _ in range(args.steps):
                assert c.post("/api/form/tools/diag/execute?wait=30", json={"action": "echo", "params": {
                    "message": "x"}}).json()["success"]
            direct = time.perf_counter() - t0
            t0 = time.perf_counter()
            plan_id = c.post("/api/plans", json={"blocks": [{"primitive_block": [step] * args.steps}]}).json()[
                "plan_id"]
            while c.get(f"/api/plans/{plan_id}").json()["status"] not in ("DONE", "FAILED"):
                time.sleep(0.01)
            planned = time.perf_counter() - t0
            if r:
                direct_s.append(direct)
                plan_s.append(planned)
            print(f"  round {r}: direct {direct * 1000:.0f} ms, plan {planned * 1000:.0f} ms", flush=True)
        d, p = statistics.median(direct_s), statistics.median(plan_s)
        print()
        print(f"{args.steps} no-op steps, median of {args.rounds} rounds")
        print(f"  {'direct executions (API, wait)':34} {d * 1000:8.0f} ms  {d / args.steps * 1000:6.1f} ms/step")
        print(f"  {'one plan (event-driven runner)':34} {p * 1000:8.0f} ms  {p / args.steps * 1000:6.1f} ms/step")
        print(f"  plan overhead per step: {(p - d) / args.steps * 1000:+.1f} ms")
    finally:
        for proc in procs:
            stop(proc)
        broker.stop()
        pg.stop()


if __name__ == "__main__":
    main()
