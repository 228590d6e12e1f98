"""Shared fixtures: a real embedded Postgres (pgvector), a real Redis, real worker and API processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from registry.db import connect
from registry.discovery import refresh_search
from registry.embeddings import try_embedder
from registry.migrate import migrate
from registry.tools import upsert_tool
from toolfleet.services import EmbeddedPostgres, EmbeddedRedis
from toolfleet.settings import get_settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_TOOLS = ["stubborn", "secretive", "asyncish", "flaky"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Stack:
    root: Path
    env: dict[str, str]
    database_url: str
    broker_url: str
    logs: Path


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Embedded Postgres 18 + pgvector and a redis-server on spare ports, migrated. Fails if either cannot start."""
    root = tmp_path_factory.mktemp("toolfleet")
    pg = EmbeddedPostgres(root / "postgres", free_port(), extra_options="-c fsync=off")
    pg.start(progress=False)
    redis = EmbeddedRedis(root, free_port())
    redis.start()
    logs = root / "logs"
    logs.mkdir()
    env = {
        "DATABASE_URL": pg.url,
        "BROKER_URL": redis.url,
        "TOOLFLEET_STATE_DIR": str(root),
        "TOOLFLEET_HEARTBEAT_INTERVAL_S": "1",
        "TOOLFLEET_WORKER_DEAD_AFTER_S": "5",
        "TOOLFLEET_HARD_LIMIT_GRACE_S": "2",
        "TOOLFLEET_WORKSPACE_DIR": str(root / "workspace"),
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    get_settings.cache_clear()
    try:
        migrate(pg.url)
        import importlib

        with connect(pg.url) as conn:
            stored = []
            for name in SAMPLE_TOOLS:
                module = f"tests.sample_tools.{name}"
                spec = importlib.import_module(module).TOOL
                stored.append(upsert_tool(conn, spec.definition(module).model_copy(update={"builtin": False})))
            refresh_search(conn, stored, try_embedder())
        yield Stack(root, env, pg.url, redis.url, logs)
    finally:
        redis.stop()
        pg.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        get_settings.cache_clear()


def _kill_group(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(grace)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@dataclass
class WorkerProc:
    name: str
    host: str
    proc: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes, as a crash would."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


@pytest.fixture(scope="session")
def start_worker(stack: Stack) -> Iterator[Callable[..., WorkerProc]]:
    started: list[WorkerProc] = []

    def _start(category: str = "internal", host: str = "testhost", concurrency: int = 2,
               env: dict[str, str] | None = None, args: list[str] | None = None) -> WorkerProc:
        name = f"{category}.{uuid.uuid4().hex[:6]}@{host}"
        log = stack.logs / f"worker-{name}.log"
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolfleet", "worker", "--category", category, "--hostname", host,
             "--name", name, "--concurrency", str(concurrency), "--loglevel", "INFO", *(args or [])],
            cwd=ROOT, env={**os.environ, **stack.env, **(env or {})}, stdout=open(log, "wb"),
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        worker = WorkerProc(name, host, proc, log)
        started.append(worker)
        deadline = time.monotonic() + 60
        with connect(stack.database_url) as conn:
            while True:
                row = conn.execute("SELECT 1 FROM workers WHERE name = %s AND stopped_at IS NULL",
                                   (name,)).fetchone()
                if row:
                    return worker
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"worker {name} did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.1)

    yield _start
    for worker in started:
        _kill_group(worker.proc)


@dataclass
class ApiProc:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60)


@pytest.fixture(scope="session")
def start_api(stack: Stack) -> Iterator[Callable[..., ApiProc]]:
    started: list[ApiProc] = []

    def _start(env: dict[str, str] | None = None) -> ApiProc:
        port = free_port()
        log = stack.logs / f"api-{port}.log"
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "warning"],
            cwd=ROOT, env={**os.environ, **stack.env, **(env or {})}, stdout=open(log, "wb"),
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        api = ApiProc(f"http://127.0.0.1:{port}", proc, log)
        started.append(api)
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{api.url}/api/health", timeout=1).status_code == 200:
                    return api
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"API did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)

    yield _start
    for api in started:
        _kill_group(api.proc)


@pytest.fixture(scope="session")
def api(start_api: Callable[..., ApiProc]) -> ApiProc:
    return start_api()


@pytest.fixture(scope="session")
def internal_worker(start_worker: Callable[..., WorkerProc]) -> WorkerProc:
    return start_worker("internal", host="testhost")


@pytest.fixture()
def client(api: ApiProc, internal_worker: WorkerProc) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


def wait_terminal(client: httpx.Client, execution_id: str, timeout: float = 30) -> dict:
    """Poll the record until it reaches a terminal state; fail loudly otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        record = client.get(f"/api/executions/{execution_id}").json()
        if record["status"] in ("succeeded", "failed", "timed_out", "cancelled"):
            return record
        if time.monotonic() > deadline:
            raise AssertionError(f"execution {execution_id} still {record['status']} after {timeout}s: {record}")
        time.sleep(0.1)
