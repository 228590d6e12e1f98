"""Scaling one category by adding workers, on one machine: separate worker processes with
distinct host names consume the `internal` queue while a `terminal` worker serves probes.

    .venv/bin/python bench/scaling.py [--workers 1,2,4] [--n 60] [--sleep 0.2]

Each round drives N diag.sleep executions at `internal` with 1, 2, 4 ... workers (concurrency 1
each) and, at the same time, a probe every 0.2 s at the `terminal` category (`terminal.run true`).
Prints the `internal` throughput and the probes' latency: adding internal workers should raise the
first and leave the second alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchdb import bench_stack  # noqa: E402
from dispatch import pct, spawn, stop  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--sleep", type=float, default=0.2)
    args = ap.parse_args()

    from registry.db import connect
    from toolfleet.services import database_url

    rows = []
    internal_workers: list[subprocess.Popen[bytes]] = []
    extra = {"TOOLFLEET_HEARTBEAT_INTERVAL_S": "1"}
    with bench_stack([["--category", "terminal", "--concurrency", "1", "--hostname", "probehost"]], extra) as (
            base, tmp):
        env = {**os.environ, **extra}
        client = httpx.Client(base_url=base, timeout=60)
        pg_url = database_url()

        def wait_workers(count: int) -> None:
            for _ in range(600):
                try:
                    live = [w for w in client.get("/api/workers").json()["workers"] if w["category"] == "internal"]
                    if len(live) >= count:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            raise SystemExit(f"workers did not start; see {tmp}")

        for count in [int(x) for x in args.workers.split(",")]:
            while len(internal_workers) < count:
                i = len(internal_workers)
                internal_workers.append(spawn([sys.executable, "-m", "toolfleet", "worker", "--category", "internal",
                                               "--concurrency", "1", "--hostname", f"simhost{i}", "--loglevel",
                                               "WARNING"], env, tmp / f"internal{i}.log"))
            wait_workers(count)
            print(f"round: {count} internal worker(s), {args.n} x diag.sleep({args.sleep}) ...", flush=True)
            probes: list[float] = []
            stop_probes = threading.Event()

            def probe(probes: list[float], stop_probes: threading.Event) -> None:
                with httpx.Client(base_url=base, timeout=60) as pc:
                    while not stop_probes.is_set():
                        t0 = time.monotonic()
                        r = pc.post("/api/form/tools/terminal/execute?wait=30",
                                    json={"action": "run", "params": {"command": ["true"]}})
                        if r.status_code == 200:
                            probes.append((time.monotonic() - t0) * 1000)
                        time.sleep(0.2)

            prober = threading.Thread(target=probe, args=(probes, stop_probes))
            prober.start()
            ids = [client.post("/api/form/tools/diag/execute", json={"action": "sleep", "params": {
                "seconds": args.sleep}}).json()["execution_id"] for _ in range(args.n)]
            with connect(pg_url) as conn:
                while True:
                    row = conn.execute(
                        "SELECT count(*) FILTER (WHERE status = 'succeeded') AS done, "
                        "EXTRACT(EPOCH FROM max(finished_at) - min(submitted_at)) AS span, "
                        "count(DISTINCT worker) AS hosts FROM executions WHERE id = ANY(%s::uuid[])",
                        (ids,)).fetchone()
                    if row["done"] >= args.n:
                        break
                    time.sleep(0.2)
            stop_probes.set()
            prober.join()
            rows.append((count, args.n / float(row["span"]), int(row["hosts"]), statistics.median(probes),
                         pct(probes, 95), len(probes)))
        print()
        print(f"{'internal workers':>16} {'internal exec/s':>15} {'hosts used':>10} {'terminal probe p50 ms':>21} "
              f"{'p95 ms':>7} {'probes':>6}")
        for r in rows:
            print(f"{r[0]:>16} {r[1]:15.2f} {r[2]:>10} {r[3]:21.1f} {r[4]:7.1f} {r[5]:>6}")
        print(f"(ideal internal throughput with sleep {args.sleep}s: {1 / args.sleep:.1f}/s per worker)")
        for proc in internal_workers:
            stop(proc)


if __name__ == "__main__":
    main()
