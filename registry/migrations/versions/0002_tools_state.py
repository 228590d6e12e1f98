"""State for the built-in tools: execution logs and artifacts, memory tables, seen feed items.

Revision ID: 0002
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE executions ADD COLUMN log text NOT NULL DEFAULT ''")
    op.execute(
        """
        CREATE TABLE artifacts (
            execution_id uuid NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
            name         text NOT NULL,
            content_type text NOT NULL,
            size         integer NOT NULL,
            data         bytea NOT NULL,
            created_at   timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (execution_id, name)
        )
        """
    )
    op.execute(
        """
        CREATE TABLE memory_events (
            id         bigserial PRIMARY KEY,
            type       text NOT NULL,
            content    text NOT NULL,
            importance real NOT NULL DEFAULT 0.5,
            context    jsonb NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            embedding  vector(384),
            tsv        tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED
        )
        """
    )
    op.execute("CREATE INDEX memory_events_time ON memory_events (created_at DESC)")
    op.execute("CREATE INDEX memory_events_tsv ON memory_events USING gin (tsv)")
    op.execute("CREATE INDEX memory_events_embedding ON memory_events USING hnsw (embedding vector_cosine_ops)")
    op.execute(
        """
        CREATE TABLE memory_identity (
            key        text PRIMARY KEY,
            value      jsonb NOT NULL,
            source     text,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        """
        CREATE TABLE memory_nodes (
            name       text PRIMARY KEY,
            status     text NOT NULL DEFAULT 'active',
            data       jsonb NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        """
        CREATE TABLE memory_links (
            parent     text NOT NULL REFERENCES memory_nodes(name) ON DELETE CASCADE,
            child      text NOT NULL REFERENCES memory_nodes(name) ON DELETE CASCADE,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (parent, child),
            CHECK (parent <> child)
        )
        """
    )
    op.execute("CREATE INDEX memory_links_child ON memory_links (child)")
    op.execute(
        """
        CREATE TABLE memory_principles (
            id         bigserial PRIMARY KEY,
            kind       text NOT NULL CHECK (kind IN ('principle', 'constraint')),
            text       text NOT NULL,
            patterns   text[] NOT NULL DEFAULT '{}',
            effect     text NOT NULL CHECK (effect IN ('allow', 'deny')),
            reason     text NOT NULL DEFAULT '',
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        """
        CREATE TABLE feed_seen (
            feed_url text NOT NULL,
            item_id  text NOT NULL,
            seen_at  timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (feed_url, item_id)
        )
        """
    )


def downgrade() -> None:
    for table in ("feed_seen", "memory_principles", "memory_links", "memory_nodes", "memory_identity",
                  "memory_events", "artifacts"):
        op.execute(f"DROP TABLE IF EXISTS {table}")
    op.execute("ALTER TABLE executions DROP COLUMN IF EXISTS log")
