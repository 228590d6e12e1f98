"""Apply the schema migrations and load the built-in tool definitions. Safe to run twice."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from registry.builtins import builtin_definitions
from registry.db import connect
from registry.discovery import refresh_search
from registry.embeddings import try_embedder
from registry.tools import upsert_tool
from toolfleet.services import check_database, database_url

__all__ = ["migrate"]

_SCRIPTS = Path(__file__).parent / "migrations"


def migrate(url: str | None = None) -> list[str]:
    """Upgrade the schema to head and (re)register built-ins; answers the built-in tool names."""
    url = url or database_url()
    check_database(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(_SCRIPTS))
    cfg.set_main_option("sqlalchemy.url", url.replace("postgresql://", "postgresql+psycopg://", 1))
    command.upgrade(cfg, "head")
    names = []
    stored = []
    with connect(url) as conn:
        for definition in builtin_definitions():
            current = conn.execute("SELECT params_schemas, actions, version, enabled FROM tools WHERE name = %s",
                                   (definition.name,)).fetchone()
            changed = current is not None and (current["params_schemas"] != definition.params_schemas
                                               or current["actions"] != definition.actions)
            if current is not None:
                kept = {"version": current["version"], "enabled": current["enabled"]}
                definition = definition.model_copy(update=kept)
            stored.append(upsert_tool(conn, definition, bump_version=changed))
            names.append(definition.name)
        refresh_search(conn, stored, try_embedder())
    return names
