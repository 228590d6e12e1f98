"""`toolfleet up`: the whole system on one machine, in the foreground, until Ctrl-C.

Starts the embedded Postgres and Redis when no URL is configured, migrates, then runs
the API, one worker per category and Flower as child processes. On Ctrl-C (or SIGTERM)
it stops the children, then the embedded servers, and leaves nothing running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from toolfleet.names import CATEGORIES
from toolfleet.services import EmbeddedPostgres, EmbeddedRedis, broker_url, check_broker, database_url, redact
from toolfleet.settings import Settings

__all__ = ["Stack"]


def _say(message: str) -> None:
    print(message, flush=True)


@dataclass
class Child:
    name: str
    argv: list[str]
    proc: subprocess.Popen[bytes] | None = None


@dataclass
class Stack:
    settings: Settings
    concurrency: int = 2
    categories: tuple[str, ...] = CATEGORIES
    flower: bool = True
    children: list[Child] = field(default_factory=list)
    pg: EmbeddedPostgres | None = None
    redis: EmbeddedRedis | None = None

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["DATABASE_URL"] = database_url(self.settings)
        env["BROKER_URL"] = broker_url(self.settings)
        env["TOOLFLEET_STATE_DIR"] = str(self.settings.state_path())
        return env

    def start_services(self) -> None:
        s = self.settings
        state = s.state_path()
        if s.database_url:
            _say(f"• Postgres: {redact(database_url(s))} (DATABASE_URL)")
        else:
            _say(f"• Postgres: starting embedded PostgreSQL 18 + pgvector in {state / 'postgres'} ...")
            self.pg = EmbeddedPostgres(state / "postgres", s.embedded_pg_port)
            self.pg.start()
            _say(f"  ready at {self.pg.url}")
        if s.broker_url:
            _say(f"• Broker: {redact(s.broker_url)} (BROKER_URL)")
            check_broker(s.broker_url)
        else:
            _say(f"• Broker: starting embedded Redis on 127.0.0.1:{s.embedded_redis_port} ...")
            self.redis = EmbeddedRedis(state, s.embedded_redis_port)
            self.redis.start()
            _say(f"  ready at {self.redis.url} ({EmbeddedRedis.executable()})")

    def migrate(self) -> None:
        from registry.migrate import migrate

        _say("• Migrating the schema and loading built-in tools ...")
        names = migrate(database_url(self.settings))
        _say(f"  {len(names)} built-in tools: {', '.join(names)}")

    def start_children(self) -> None:
        s, py = self.settings, sys.executable
        exposed = s.api_host not in ("127.0.0.1", "localhost", "::1")
        if exposed and self.flower and not os.environ.get("FLOWER_BASIC_AUTH"):
            raise RuntimeError(f"Flower would listen on {s.api_host} without a password; set FLOWER_BASIC_AUTH="
                               "user:password (or start with --no-flower)")
        self.children.append(Child("api", [py, "-m", "uvicorn", "--factory", "api.app:create_app", "--host",
                                           s.api_host, "--port", str(s.api_port), "--log-level", "warning"]))
        for category in self.categories:
            # browser sessions live in one process, so the browser worker runs one at a time
            concurrency = 1 if category == "browser" else self.concurrency
            self.children.append(Child(f"worker-{category}", [
                py, "-m", "toolfleet", "worker", "--category", category, "--concurrency", str(concurrency),
                "--loglevel", "WARNING"]))
        if self.flower:
            self.children.append(Child("flower", [py, "-m", "celery", "--broker", broker_url(s), "flower",
                                                  f"--port={s.flower_port}", f"--address={s.api_host}",
                                                  "--logging=warning"]))
        env = self._env()
        logs = s.state_path() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        for child in self.children:
            out = open(logs / f"{child.name}.log", "ab")  # noqa: SIM115 - kept open for the child's life
            child.proc = subprocess.Popen(child.argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                          start_new_session=True)
            out.close()
        self._wait_for_api()
        host = s.api_host
        _say("")
        _say("toolfleet is up:")
        _say(f"  API       http://{host}:{s.api_port}        (OpenAPI docs: http://{host}:{s.api_port}/docs)")
        if self.flower:
            _say(f"  Flower    http://{host}:{s.flower_port}")
        _say(f"  Workers   {', '.join(self.categories)} (concurrency {self.concurrency} each; browser 1)")
        _say(f"  Logs      {logs}")
        _say("Press Ctrl-C to stop everything.")

    def _wait_for_api(self) -> None:
        import httpx

        url = f"http://{self.settings.api_host}:{self.settings.api_port}/api/health"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            api = self.children[0].proc
            assert api is not None
            if api.poll() is not None:
                raise RuntimeError(f"the API exited at start; see {self.settings.state_path() / 'logs' / 'api.log'}")
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError("the API did not answer within 60 s")

    def watch(self) -> int:
        """Block until Ctrl-C/SIGTERM or a child dies; answers the exit code."""
        stop = False

        def _on_signal(signum: int, _frame: object) -> None:
            nonlocal stop
            stop = True

        signal.signal(signal.SIGINT, _on_signal)
        signal.signal(signal.SIGTERM, _on_signal)
        restarts: dict[str, list[float]] = {}
        while not stop:
            for child in self.children:
                if child.proc is not None and child.proc.poll() is not None:
                    log = self.settings.state_path() / "logs" / f"{child.name}.log"
                    recent = [t for t in restarts.get(child.name, []) if time.monotonic() - t < 60]
                    if not child.name.startswith("worker-") or len(recent) >= 5:
                        _say(f"! {child.name} exited with code {child.proc.returncode}; see {log}. Stopping.")
                        return 1
                    # a worker can die on a broker connection loss (a kombu bug); restart it like a supervisor would
                    _say(f"! {child.name} exited with code {child.proc.returncode}; restarting it (see {log})")
                    restarts[child.name] = [*recent, time.monotonic()]
                    out = open(log, "ab")  # noqa: SIM115 - kept open for the child's life
                    child.proc = subprocess.Popen(child.argv, env=self._env(), stdout=out, stderr=subprocess.STDOUT,
                                                  start_new_session=True)
                    out.close()
            time.sleep(0.3)
        return 0

    def stop(self) -> None:
        _say("\nStopping ...")
        running = [c for c in self.children if c.proc is not None and c.proc.poll() is None]
        for child in running:
            assert child.proc is not None
            try:
                os.killpg(child.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 15
        for child in running:
            assert child.proc is not None
            try:
                child.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:  # the whole group: prefork pool processes included
                os.killpg(child.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            child.proc.wait()
            _say(f"  stopped {child.name}")
        if self.redis:
            self.redis.stop()
            _say("  stopped embedded Redis")
        if self.pg:
            self.pg.stop()
            _say("  stopped embedded PostgreSQL")
        _say("All stopped.")
