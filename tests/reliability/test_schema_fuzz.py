"""Fuzz every HTTP endpoint from the OpenAPI schema with schemathesis: no input may cause a 5xx.

Runs against its own database (and broker database) so the random tools, plans and keys it
creates never touch the rest of the suite.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg

from registry.migrate import migrate
from tests.conftest import ApiProc


def test_no_server_errors_for_any_generated_request(start_api, stack) -> None:  # type: ignore[no-untyped-def]
    admin = stack.database_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS toolfleet_fuzz")
        conn.execute("CREATE DATABASE toolfleet_fuzz")
    url = stack.database_url.rsplit("/", 1)[0] + "/toolfleet_fuzz"
    migrate(url)
    api: ApiProc = start_api({"DATABASE_URL": url, "BROKER_URL": stack.broker_url.rsplit("/", 1)[0] + "/7"})
    result = subprocess.run(
        [str(Path(sys.executable).with_name("schemathesis")), "run", f"{api.url}/openapi.json",
         "--checks", "not_a_server_error", "--max-examples", "25", "--seed", "1",
         "--phases", "examples,coverage,fuzzing", "--no-color", "--request-timeout", "60"],
        capture_output=True, text=True, timeout=600)
    summary = result.stdout[-3000:]
    assert result.returncode == 0, summary + api.log.read_text()[-3000:]
    assert "passed" in summary and "Server error" not in summary
