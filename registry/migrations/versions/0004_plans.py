"""Plans: plan runs, their steps (one row per step per fix generation), composite tool bodies.

Revision ID: 0004
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE plans (
            id            uuid PRIMARY KEY,
            goal          text NOT NULL DEFAULT '',
            status        text NOT NULL CHECK (status IN ('READY','PLANNING','REVIEW','EXECUTING','VERIFYING',
                                                          'FIXING','DONE','FAILED','CANCELLED')),
            review        text NOT NULL DEFAULT 'none'
                          CHECK (review IN ('none','before_each_block','after_each_block')),
            blocks        jsonb NOT NULL,
            current_block integer NOT NULL DEFAULT 0,
            generation    integer NOT NULL DEFAULT 0,
            history       jsonb NOT NULL DEFAULT '[]',
            error         jsonb,
            created_at    timestamptz NOT NULL DEFAULT now(),
            updated_at    timestamptz NOT NULL DEFAULT now(),
            finished_at   timestamptz
        )
        """
    )
    op.execute(
        """
        CREATE TABLE plan_steps (
            plan_id      uuid NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
            generation   integer NOT NULL,
            block_index  integer NOT NULL,
            step_index   integer NOT NULL,
            tool         text NOT NULL,
            action       text NOT NULL,
            params       jsonb NOT NULL DEFAULT '{}',
            target       text,
            depends_on   integer[] NOT NULL DEFAULT '{}',
            status       text NOT NULL DEFAULT 'pending',
            execution_id uuid REFERENCES executions(id),
            error        jsonb,
            PRIMARY KEY (plan_id, generation, block_index, step_index)
        )
        """
    )
    op.execute("ALTER TABLE executions ADD COLUMN plan_id uuid")
    op.execute("ALTER TABLE executions ADD COLUMN plan_block integer")
    op.execute("ALTER TABLE executions ADD COLUMN plan_step integer")
    op.execute("CREATE INDEX executions_plan ON executions (plan_id) WHERE plan_id IS NOT NULL")
    op.execute("ALTER TABLE tools ADD COLUMN body jsonb")
    op.execute("CREATE INDEX plans_status ON plans (status, updated_at)")


def downgrade() -> None:
    op.execute("ALTER TABLE tools DROP COLUMN IF EXISTS body")
    for column in ("plan_step", "plan_block", "plan_id"):
        op.execute(f"ALTER TABLE executions DROP COLUMN IF EXISTS {column}")
    op.execute("DROP TABLE IF EXISTS plan_steps")
    op.execute("DROP TABLE IF EXISTS plans")
