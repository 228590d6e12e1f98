"""Chaos: run N executions while faults are injected, then count what the record says.

    .venv/bin/python bench/chaos.py [--n 300] [--faults kill-workers,restart-redis,restart-postgres]

Each fault runs on its own fresh embedded Postgres and redis-server (spare ports, in a temp folder;
the machine's shared services are not touched), an API and three `internal` workers:
  kill-workers      SIGKILL a random worker (and its pool) every 2 s, starting a replacement
  restart-redis     stop the broker for 3 s in the middle of the run, then start it again (AOF on)
  restart-rabbitmq  the same with a rabbitmq-server node of its own (durable queues, persistent messages)
  restart-postgres  stop Postgres for 3 s in the middle of the run, then start it again
Per fault: submitted, accepted (202), refused (503 while a service was down), terminal, lost (accepted
but not terminal at the end), ran twice (started more than once without a planned retry). Ends with
`lost: K` over all faults.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchdb import free_port  # noqa: E402
from dispatch import spawn, stop  # noqa: E402


class OwnRabbit:
    """A rabbitmq-server node of our own (own node name, ports, data folder), for the restart fault."""

    def __init__(self, root: Path) -> None:
        self.root = root / "rabbitmq"
        self.port, self.dist = free_port(), free_port()
        self.node = f"tfchaos{self.port}@localhost"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}//"

    def start(self) -> None:
        import shutil

        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "enabled_plugins").write_text("[].")
        (self.root / "rabbitmq.conf").write_text(f"listeners.tcp.default = 127.0.0.1:{self.port}\n"
                                                 "loopback_users = none\n")
        shutil.chown(self.root, "rabbitmq", "rabbitmq")
        for f in self.root.iterdir():
            shutil.chown(f, "rabbitmq", "rabbitmq")
        env = {**os.environ, "RABBITMQ_NODENAME": self.node, "RABBITMQ_NODE_PORT": str(self.port),
               "RABBITMQ_DIST_PORT": str(self.dist), "RABBITMQ_CONFIG_FILE": str(self.root / "rabbitmq.conf"),
               "RABBITMQ_MNESIA_BASE": str(self.root / "mnesia"), "RABBITMQ_LOG_BASE": str(self.root / "log"),
               "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.root / "enabled_plugins"),
               "RABBITMQ_FEATURE_FLAGS_FILE": str(self.root / "ff"), "RABBITMQ_PID_FILE": str(self.root / "pid")}
        self.proc = subprocess.Popen(["rabbitmq-server"], env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        import socket

        for _ in range(120):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.5)
        raise RuntimeError("rabbitmq-server did not start")

    def stop(self) -> None:
        subprocess.run(["rabbitmqctl", "-n", self.node, "stop"], capture_output=True, timeout=60)
        if self.proc:
            self.proc.wait(30)


def run_fault(fault: str, n: int) -> dict[str, object]:
    from registry.db import connect
    from registry.migrate import migrate
    from toolfleet.services import EmbeddedPostgres, EmbeddedRedis
    from toolfleet.settings import get_settings

    tmp = Path(tempfile.mkdtemp(prefix=f"toolfleet-chaos-{fault}-"))
    pg = EmbeddedPostgres(tmp / "postgres", free_port())
    pg.start(progress=False)
    broker: EmbeddedRedis | OwnRabbit = (OwnRabbit(tmp) if fault == "restart-rabbitmq"
                                         else EmbeddedRedis(tmp, free_port()))
    broker.start()
    env = {**os.environ, "DATABASE_URL": pg.url, "BROKER_URL": broker.url, "TOOLFLEET_STATE_DIR": str(tmp),
           "TOOLFLEET_PRELOAD_EMBEDDER": "false", "TOOLFLEET_HEARTBEAT_INTERVAL_S": "1",
           "TOOLFLEET_WORKER_DEAD_AFTER_S": "4", "TOOLFLEET_VISIBILITY_TIMEOUT_S": "6",
           "TOOLFLEET_RESEND_AFTER_S": "5", "TOOLFLEET_PUBLISH_TIMEOUT_S": "2"}
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "BROKER_URL", "TOOLFLEET_STATE_DIR")})
    get_settings.cache_clear()
    migrate(pg.url)
    api_port = free_port()
    api = spawn([sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--port", str(api_port),
                 "--log-level", "warning"], env, tmp / "api.log")
    workers: list[subprocess.Popen[bytes]] = []
    counter = [0]

    def start_worker() -> None:
        counter[0] += 1
        workers.append(spawn([sys.executable, "-m", "toolfleet", "worker", "--category", "internal", "--hostname",
                              f"chaos{counter[0]}", "--concurrency", "2", "--loglevel", "WARNING"], env,
                             tmp / f"worker{counter[0]}.log"))

    restarted = [0]

    def supervise() -> None:
        """Like compose's `restart: unless-stopped`: a worker that exits is replaced."""
        while not finished.is_set():
            for w in list(workers):
                if w.poll() is not None and w.returncode != -signal.SIGKILL:
                    workers.remove(w)
                    restarted[0] += 1
                    start_worker()
            finished.wait(1.0)

    finished = threading.Event()
    supervisor = threading.Thread(target=supervise, daemon=True)

    for _ in range(3):
        start_worker()
    base = f"http://127.0.0.1:{api_port}"
    client = httpx.Client(base_url=base, timeout=30)
    for _ in range(300):
        try:
            if client.get("/api/health").json()["workers"] >= 3:
                break
        except (httpx.HTTPError, KeyError, ValueError):
            pass
        time.sleep(0.2)
    accepted: list[str] = []
    refused = 0
    done = threading.Event()

    def inject() -> None:
        time.sleep(1.0)
        if fault == "kill-workers":
            while not done.is_set():
                live = [w for w in workers if w.poll() is None]
                if live:
                    victim = random.choice(live)
                    os.killpg(victim.pid, signal.SIGKILL)
                    victim.wait()
                    start_worker()
                done.wait(2.0)
        elif fault in ("restart-redis", "restart-rabbitmq"):
            broker.stop()
            time.sleep(3)
            broker.start()
        elif fault == "restart-postgres":
            pg.stop()
            time.sleep(3)
            pg.start(progress=False)

    injector = threading.Thread(target=inject)
    injector.start()
    supervisor.start()
    started = time.monotonic()
    for i in range(n):
        try:
            r = client.post("/api/form/tools/diag/execute", json={"action": "sleep", "params": {"seconds": 0.05}})
            if r.status_code == 202:
                accepted.append(r.json()["execution_id"])
            else:
                refused += 1
        except httpx.HTTPError:
            refused += 1
        time.sleep(max(0.0, (i + 1) * 0.02 - (time.monotonic() - started)))  # about 50 submissions/s
    done.set()
    injector.join()
    deadline = time.monotonic() + 180
    terminal = 0
    while time.monotonic() < deadline:
        try:
            with connect(pg.url) as conn:
                rows = conn.execute(
                    "SELECT count(*) FILTER (WHERE status IN ('succeeded','failed','timed_out','cancelled')) AS t, "
                    "count(*) FILTER (WHERE attempts - retries > 1) AS twice, "
                    "count(*) FILTER (WHERE status = 'succeeded') AS ok "
                    "FROM executions WHERE id = ANY(%s::uuid[])", (accepted,)).fetchone()
            terminal = int(rows["t"])
            if terminal >= len(accepted):
                break
        except Exception:  # Postgres may still be restarting
            pass
        time.sleep(1.0)
    try:
        with connect(pg.url) as conn:
            stuck = conn.execute("SELECT id, status, attempts, retries, resends, worker, sent_at, started_at "
                                 "FROM executions WHERE id = ANY(%s::uuid[]) AND status IN ('queued', 'running')",
                                 (accepted,)).fetchall()
        for row in stuck[:5]:
            print(f"  not terminal: {dict(row)}", flush=True)
    except Exception:
        pass
    finished.set()
    result = {"fault": fault, "workers_restarted": restarted[0], "submitted": n, "accepted": len(accepted),
              "refused": refused, "terminal": terminal,
              "succeeded": int(rows["ok"]), "lost": len(accepted) - terminal, "ran_twice": int(rows["twice"])}
    for w in workers:
        stop(w)
    stop(api)
    broker.stop()
    pg.stop()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--faults", default="kill-workers,restart-redis,restart-rabbitmq,restart-postgres")
    args = ap.parse_args()
    results = []
    for fault in args.faults.split(","):
        print(f"fault {fault}: {args.n} executions ...", flush=True)
        results.append(run_fault(fault, args.n))
        print(f"  {results[-1]}", flush=True)
    print()
    print(f"{'fault':18} {'submitted':>9} {'accepted':>8} {'refused':>7} {'terminal':>8} {'succeeded':>9} "
          f"{'lost':>5} {'ran twice':>9} {'workers restarted':>17}")
    for r in results:
        print(f"{r['fault']:18} {r['submitted']:>9} {r['accepted']:>8} {r['refused']:>7} {r['terminal']:>8} "
              f"{r['succeeded']:>9} {r['lost']:>5} {r['ran_twice']:>9} {r['workers_restarted']:>17}")
    print(f"lost: {sum(int(r['lost']) for r in results)}")  # type: ignore[call-overload]


if __name__ == "__main__":
    main()
