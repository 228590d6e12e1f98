"""Discovery: searchable text (weighted tsvector) and an embedding per tool, with GIN and HNSW indexes.

Revision ID: 0003
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE tools ADD COLUMN search_name text NOT NULL DEFAULT ''")
    op.execute("ALTER TABLE tools ADD COLUMN search_text text NOT NULL DEFAULT ''")
    op.execute(
        """
        ALTER TABLE tools ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('english', search_name), 'A') ||
            setweight(to_tsvector('english', description), 'B') ||
            setweight(to_tsvector('english', search_text), 'C')
        ) STORED
        """
    )
    op.execute("ALTER TABLE tools ADD COLUMN embedding vector(384)")
    op.execute("CREATE INDEX tools_tsv ON tools USING gin (tsv)")
    op.execute("CREATE INDEX tools_embedding ON tools USING hnsw (embedding vector_cosine_ops)")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS tools_embedding")
    op.execute("DROP INDEX IF EXISTS tools_tsv")
    for column in ("embedding", "tsv", "search_text", "search_name"):
        op.execute(f"ALTER TABLE tools DROP COLUMN IF EXISTS {column}")
