"""Plan overhead: a plan of N no-op steps (one block, run in order) vs N direct executions run one
after another through the API, same run, same worker.

    .venv/bin/python bench/plans.py [--steps 20] [--rounds 5]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    with bench_stack([["--category", "internal", "--concurrency", "2"]]) as (base, _):
        c = httpx.Client(base_url=base, timeout=120)
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


if __name__ == "__main__":
    main()
