"""Sandbox overhead: a no-op runtime tool (separate sandboxed process per execution) vs the built-in
no-op `diag.echo` (in the worker process), same worker, same run.

    .venv/bin/python bench/forge.py [--n 100]

Reports the worker-side duration (claim to record, as stored in duration_ms) and the end-to-end
latency through the API (?wait), median and p95.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchdb import bench_stack  # noqa: E402
from dispatch import pct  # noqa: E402

NOOP = "def run(action, params):\n    return {'ok': action == 'noop'}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100)
    args = ap.parse_args()

    with bench_stack([["--category", "internal", "--concurrency", "1"]]) as (base, _):
        c = httpx.Client(base_url=base, timeout=120)
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


if __name__ == "__main__":
    main()
