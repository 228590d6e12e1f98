"""Reliability and security: claim ownership, re-sends, idempotent tools, rate limits, API keys.

Revision ID: 0006
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE executions ADD COLUMN worker_pid integer")
    op.execute("ALTER TABLE executions ADD COLUMN resends integer NOT NULL DEFAULT 0")
    op.execute("ALTER TABLE executions ADD COLUMN retries integer NOT NULL DEFAULT 0")
    op.execute("ALTER TABLE executions ADD COLUMN sent_at timestamptz")
    op.execute("CREATE INDEX executions_active ON executions (status, sent_at) WHERE status IN ('queued', 'running')")
    op.execute("CREATE INDEX executions_recent_tool ON executions (tool_name, submitted_at)")
    op.execute("ALTER TABLE workers ADD COLUMN pids integer[] NOT NULL DEFAULT '{}'")
    op.execute("ALTER TABLE tools ADD COLUMN idempotent boolean NOT NULL DEFAULT true")
    op.execute("ALTER TABLE tools ADD COLUMN rate_limit_per_min integer")
    op.execute(
        """
        CREATE TABLE api_keys (
            id          bigserial PRIMARY KEY,
            name        text NOT NULL UNIQUE,
            key_hash    text NOT NULL UNIQUE,
            prefix      text NOT NULL,
            scopes      text[] NOT NULL,
            categories  text[],
            tools       text[],
            created_at  timestamptz NOT NULL DEFAULT now(),
            last_used   timestamptz,
            revoked_at  timestamptz
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS api_keys")
    for column in ("rate_limit_per_min", "idempotent"):
        op.execute(f"ALTER TABLE tools DROP COLUMN IF EXISTS {column}")
    op.execute("DROP INDEX IF EXISTS executions_recent_tool")
    op.execute("ALTER TABLE workers DROP COLUMN IF EXISTS pids")
    op.execute("DROP INDEX IF EXISTS executions_active")
    for column in ("sent_at", "retries", "resends", "worker_pid"):
        op.execute(f"ALTER TABLE executions DROP COLUMN IF EXISTS {column}")
