"""Forge: immutable versions of runtime-created tools, their status, and tool events.

Revision ID: 0005
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE tool_versions (
            tool_name  text NOT NULL,
            version    integer NOT NULL,
            source     text NOT NULL,
            sha256     text NOT NULL,
            author     text NOT NULL DEFAULT 'anonymous',
            status     text NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'broken')),
            definition jsonb NOT NULL,
            preflight  jsonb,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tool_name, version)
        )
        """
    )
    op.execute("ALTER TABLE tools ADD COLUMN status text NOT NULL DEFAULT 'ok'")
    op.execute("ALTER TABLE tools ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0")
    op.execute("ALTER TABLE tools ADD COLUMN network boolean NOT NULL DEFAULT false")
    op.execute("ALTER TABLE tools ADD COLUMN memory_mb integer NOT NULL DEFAULT 256")
    op.execute(
        """
        CREATE TABLE tool_events (
            id         bigserial PRIMARY KEY,
            tool_name  text NOT NULL,
            version    integer,
            kind       text NOT NULL,
            details    jsonb NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute("CREATE INDEX tool_events_tool ON tool_events (tool_name, id DESC)")


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS tool_events")
    for column in ("memory_mb", "network", "consecutive_failures", "status"):
        op.execute(f"ALTER TABLE tools DROP COLUMN IF EXISTS {column}")
    op.execute("DROP TABLE IF EXISTS tool_versions")
