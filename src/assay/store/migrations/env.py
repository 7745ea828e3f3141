"""Alembic environment: runs against the connection handed over by ``assay.store.db``."""

from __future__ import annotations

from alembic import context

from assay.store.schema import Base

target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:  # `alembic` CLI use: build an engine from the configured URL
        from sqlalchemy import create_engine

        engine = create_engine(context.config.get_main_option("sqlalchemy.url") or "")
        with engine.connect() as connection:
            _run(connection)
        return
    _run(connection)


def _run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]  # alembic types it loosely
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite cannot ALTER most things; batch mode copes
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
