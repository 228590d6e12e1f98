"""Alembic environment: runs the SQL migrations under an advisory lock, so two
processes migrating at once (API and a worker starting together) cannot collide."""

from alembic import context
from sqlalchemy import create_engine, text

MIGRATION_LOCK = 7_340_114_001

url = context.config.get_main_option("sqlalchemy.url") or ""
engine = create_engine(url)
with engine.connect() as connection:
    connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK})
    connection.commit()
    try:
        context.configure(connection=connection, target_metadata=None, transaction_per_migration=True)
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
    finally:
        connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK})
        connection.commit()
engine.dispose()
