"""Dispatch overhead: N no-op executions through toolfleet vs N bare Celery no-op tasks, same run.

    .venv/bin/python bench/dispatch.py [--n 2000] [--concurrency 2] [--clients 16]

Starts its own embedded Postgres and Redis on spare ports, one toolfleet worker and one bare
Celery worker with the same concurrency and Celery settings, then measures:
  * bare Celery:        apply_async -> worker runs a no-op that records its finish time
  * toolfleet (python): workers.dispatch.submit (row + message) -> worker -> Postgres record
  * toolfleet (HTTP):   POST /api/form/tools/diag/execute -> worker -> Postgres record
Prints throughput (executions/s), p50/p95/p99 submit-to-finished latency and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


_last: dict[str, int] = {}


def progress(label: str, done: int, total: int) -> None:
    """A live counter on a terminal; a line per quarter otherwise."""
    if sys.stdout.isatty():
        print(f"\r  {label}: {done}/{total}", end="" if done < total else "\n", flush=True)
    elif done * 4 // total > _last.get(label, -1):
        _last[label] = done * 4 // total
        print(f"  {label}: {done}/{total}", flush=True)


def spawn(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def summary(name: str, latencies_ms: list[float], span_s: float) -> dict[str, float | str]:
    return {"name": name, "throughput": len(latencies_ms) / span_s, "p50": pct(latencies_ms, 50),
            "p95": pct(latencies_ms, 95), "p99": pct(latencies_ms, 99)}


def wait_rows(conn, ids: list[str], label: str) -> tuple[list[float], float]:  # type: ignore[no-untyped-def]
    total = len(ids)
    while True:
        done = conn.execute("SELECT count(*) AS n FROM executions WHERE id = ANY(%s::uuid[]) AND status IN "
                            "('succeeded','failed','timed_out','cancelled')", (ids,)).fetchone()["n"]
        progress(label, done, total)
        if done >= total:
            break
        time.sleep(0.2)
    rows = conn.execute(
        "SELECT status, EXTRACT(EPOCH FROM finished_at - submitted_at) * 1000 AS ms, "
        "EXTRACT(EPOCH FROM submitted_at) AS s, EXTRACT(EPOCH FROM finished_at) AS f "
        "FROM executions WHERE id = ANY(%s::uuid[])", (ids,)).fetchall()
    bad = [r for r in rows if r["status"] != "succeeded"]
    if bad:
        raise SystemExit(f"{len(bad)} executions did not succeed")
    span = float(max(r["f"] for r in rows) - min(r["s"] for r in rows))
    return [float(r["ms"]) for r in rows], span


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=2, help="worker processes, same for both")
    ap.add_argument("--clients", type=int, default=16, help="concurrent submitters")
    args = ap.parse_args()

    import httpx
    import redis

    from registry.db import connect
    from registry.migrate import migrate
    from toolfleet.services import EmbeddedPostgres, EmbeddedRedis
    from toolfleet.settings import get_settings
    from workers.app import create_app
    from workers.dispatch import submit

    tmp = Path(tempfile.mkdtemp(prefix="toolfleet-bench-"))
    print(f"starting embedded Postgres and Redis in {tmp} ...", flush=True)
    pg = EmbeddedPostgres(tmp / "postgres", free_port())
    pg.start(progress=False)
    broker = EmbeddedRedis(tmp, free_port())
    broker.start()
    results_url = broker.url.rsplit("/", 1)[0] + "/2"
    env = {**os.environ, "DATABASE_URL": pg.url, "BROKER_URL": broker.url, "BENCH_RESULTS_URL": results_url,
           "TOOLFLEET_STATE_DIR": str(tmp)}
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "BROKER_URL", "TOOLFLEET_STATE_DIR")})
    get_settings.cache_clear()
    migrate(pg.url)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        api_port = free_port()
        procs.append(spawn([sys.executable, "-m", "toolfleet", "worker", "--category", "internal", "--concurrency",
                            str(args.concurrency), "--loglevel", "WARNING"], env, tmp / "worker.log"))
        procs.append(spawn([sys.executable, "-m", "celery", "-A", "bench._bare:app", "worker", "-Q", "bare",
                            "-c", str(args.concurrency), "--loglevel", "WARNING", "--without-gossip",
                            "--without-mingle"], env, tmp / "bare.log"))
        procs.append(spawn([sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--port",
                            str(api_port), "--log-level", "warning"], env, tmp / "api.log"))
        base = f"http://127.0.0.1:{api_port}"
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/health").json()["workers"] >= 1:
                    break
            except (httpx.HTTPError, KeyError):
                pass
            time.sleep(0.1)
        else:
            raise SystemExit(f"the API or worker did not start; see {tmp}")
        app = create_app(get_settings())
        results = redis.Redis.from_url(results_url)
        print(f"warming up; then {args.n} executions each, {args.concurrency} worker processes, "
              f"{args.clients} submitters", flush=True)
        for _ in range(20):
            app.send_task("bench.noop", args=["warm", time.time()], queue="bare")
        with connect(pg.url) as conn:
            warm = [str(submit(conn, app, tool_name="diag", action="echo", params={})["id"]) for _ in range(20)]
            wait_rows(conn, warm, "warm-up")
        while results.llen("bench:done") < 20:
            time.sleep(0.1)
        results.delete("bench:done")

        # 1. bare Celery
        def send_bare(i: int) -> None:
            app.send_task("bench.noop", args=[str(i), time.time()], queue="bare")

        with ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(send_bare, range(args.n)))
        while (done := results.llen("bench:done")) < args.n:
            progress("bare Celery", done, args.n)
            time.sleep(0.2)
        progress("bare Celery", args.n, args.n)
        items = [json.loads(x) for x in results.lrange("bench:done", 0, -1)]
        bare = summary("bare Celery", [(d - s) * 1000 for _, s, d in items],
                       max(d for _, _, d in items) - min(s for _, s, _ in items))

        # 2. toolfleet, submitted from Python
        local = threading.local()

        def send_tf(i: int) -> str:
            if not hasattr(local, "conn"):
                local.conn = connect(pg.url)
            return str(submit(local.conn, app, tool_name="diag", action="echo", params={"message": i})["id"])

        with ThreadPoolExecutor(args.clients) as pool:
            ids = list(pool.map(send_tf, range(args.n)))
        with connect(pg.url) as conn:
            tf_py = summary("toolfleet (python submit)", *wait_rows(conn, ids, "toolfleet (python submit)"))

        # 3. toolfleet over HTTP
        async def send_http() -> list[str]:
            sem = asyncio.Semaphore(args.clients)
            async with httpx.AsyncClient(base_url=base, timeout=60) as client:
                async def one(i: int) -> str:
                    async with sem:
                        r = await client.post("/api/form/tools/diag/execute",
                                              json={"action": "echo", "params": {"message": i}})
                        r.raise_for_status()
                        return str(r.json()["execution_id"])
                return await asyncio.gather(*(one(i) for i in range(args.n)))

        ids = asyncio.run(send_http())
        with connect(pg.url) as conn:
            tf_http = summary("toolfleet (HTTP API)", *wait_rows(conn, ids, "toolfleet (HTTP API)"))

        print()
        print(f"{'path':28} {'exec/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'vs bare':>8}")
        for row in (bare, tf_py, tf_http):
            ratio = float(row["throughput"]) / float(bare["throughput"])
            print(f"{row['name']:28} {row['throughput']:8.0f} {row['p50']:8.1f} {row['p95']:8.1f} "
                  f"{row['p99']:8.1f} {ratio:8.2f}")
    finally:
        for proc in procs:
            stop(proc)
        broker.stop()
        pg.stop()


if __name__ == "__main__":
    main()
