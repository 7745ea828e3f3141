"""Opening the store: an SQLAlchemy engine, migrated to the newest schema on open."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from assay.errors import StoreError

__all__ = ["create_store_engine", "migrate"]

_MIGRATIONS = Path(__file__).parent / "migrations"


def create_store_engine(url: str) -> Engine:
    """An engine for ``url``, with the schema migrated to the newest revision.

    SQLite files get their directory created, foreign keys on and a busy timeout so that two
    processes (a CLI run and a worker) can share one file.

    Raises:
        StoreError: a malformed URL, an unreachable database or a failed migration.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as error:
        raise StoreError(f"invalid database URL {url!r}: {error}") from None
    is_sqlite = parsed.get_backend_name() == "sqlite"
    if is_sqlite and parsed.database and parsed.database != ":memory:":
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    try:
        engine = create_engine(
            parsed,
            connect_args={"timeout": 30} if is_sqlite else {},
            pool_pre_ping=not is_sqlite,
        )
    except (ArgumentError, ImportError) as error:
        raise StoreError(f"cannot use database {parsed.render_as_string()}: {error}") from None
    if is_sqlite:
        event.listen(engine, "connect", _sqlite_pragmas)
    migrate(engine)
    return engine


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest Alembic revision (idempotent)."""
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except SQLAlchemyError as error:
        where = engine.url.render_as_string(hide_password=True)
        raise StoreError(f"cannot open or migrate the store at {where}: {error}") from None


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]  # DB-API connection
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    # With WAL, NORMAL keeps the database consistent on a crash and skips an fsync per commit
    # (a round writes one row per model exchange).
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
