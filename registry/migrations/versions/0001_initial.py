"""Tools, executions and workers; the pgvector extension.

Revision ID: 0001
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute(
        """
        CREATE TABLE tools (
            name          text PRIMARY KEY,
            description   text NOT NULL DEFAULT '',
            category      text NOT NULL,
            actions       jsonb NOT NULL DEFAULT '[]',
            params_schemas jsonb NOT NULL DEFAULT '{}',
            run_file      text NOT NULL,
            run_type      text NOT NULL DEFAULT 'python',
            module        text NOT NULL,
            requires_env  text[] NOT NULL DEFAULT '{}',
            weight        double precision NOT NULL DEFAULT 0.5,
            enabled       boolean NOT NULL DEFAULT true,
            version       integer NOT NULL DEFAULT 1,
            time_limit_s  double precision NOT NULL DEFAULT 60,
            builtin       boolean NOT NULL DEFAULT false,
            created_at    timestamptz NOT NULL DEFAULT now(),
            updated_at    timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute("CREATE INDEX tools_category ON tools (category)")
    op.execute(
        """
        CREATE TABLE executions (
            id              uuid PRIMARY KEY,
            tool_name       text NOT NULL,
            action          text NOT NULL,
            params          jsonb NOT NULL DEFAULT '{}',
            target          text,
            queue           text NOT NULL,
            status          text NOT NULL DEFAULT 'queued'
                            CHECK (status IN ('queued','running','succeeded','failed','timed_out','cancelled')),
            output          jsonb,
            error           jsonb,
            attempts        integer NOT NULL DEFAULT 0,
            worker          text,
            tool_version    integer,
            idempotency_key text UNIQUE,
            submitted_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
            started_at      timestamptz,
            finished_at     timestamptz,
            duration_ms     double precision
        )
        """
    )
    op.execute("CREATE INDEX executions_submitted ON executions (submitted_at DESC, id DESC)")
    op.execute("CREATE INDEX executions_tool ON executions (tool_name, submitted_at DESC)")
    op.execute("CREATE INDEX executions_status ON executions (status, submitted_at DESC)")
    op.execute(
        """
        CREATE FUNCTION toolfleet_notify_execution() RETURNS trigger AS $$
        BEGIN
            IF NEW.status IS DISTINCT FROM OLD.status THEN
                PERFORM pg_notify('toolfleet_executions', NEW.id::text || ':' || NEW.status);
            END IF;
            RETURN NEW;
        END $$ LANGUAGE plpgsql
        """
    )
    op.execute(
        """
        CREATE TRIGGER executions_notify AFTER UPDATE OF status ON executions
        FOR EACH ROW EXECUTE FUNCTION toolfleet_notify_execution()
        """
    )
    op.execute(
        """
        CREATE TABLE workers (
            name         text PRIMARY KEY,
            host         text NOT NULL,
            category     text NOT NULL,
            queues       text[] NOT NULL,
            env_present  text[] NOT NULL DEFAULT '{}',
            pid          integer NOT NULL,
            concurrency  integer NOT NULL,
            started_at   timestamptz NOT NULL DEFAULT now(),
            last_seen    timestamptz NOT NULL DEFAULT now(),
            stopped_at   timestamptz
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS workers")
    op.execute("DROP TRIGGER IF EXISTS executions_notify ON executions")
    op.execute("DROP FUNCTION IF EXISTS toolfleet_notify_execution()")
    op.execute("DROP TABLE IF EXISTS executions")
    op.execute("DROP TABLE IF EXISTS tools")
