"""Engine factory: URL resolution and the SQLite pragmas every connection needs."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from campaign.errors import CampaignError, StoreError, StoreUnusable, UsageProblem

DB_ENV = "CAMPAIGN_DB"
BUSY_TIMEOUT_MS = 30_000


def default_db_path() -> Path:
    """Outside any source checkout, so the store never changes a source digest."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "campaign" / "campaign.db"


def resolve_url(db: str | None, *, must_exist: bool = False) -> URL:
    """Turn ``--db`` (a SQLAlchemy URL or a plain file path) into a URL.

    With ``must_exist`` a SQLite file that is not there is an error instead of
    being created: read-only commands must not leave an empty store behind.
    """
    raw = db or os.environ.get(DB_ENV) or str(default_db_path())
    if "://" in raw:
        try:
            url = make_url(raw)
        except ArgumentError as exc:
            raise UsageProblem(f"{raw!r} is not a SQLAlchemy URL ({exc}); give a file path or a URL such as sqlite:///campaign.db", option="--db") from None
    else:
        url = URL.create("sqlite", database=str(Path(raw).expanduser().resolve()))
    if url.get_backend_name() == "sqlite":
        database = url.database
        if not database or database == ":memory:":
            raise UsageProblem("an in-memory SQLite store would lose every trial; give a file path", option="--db")
        _check_sqlite_path(Path(database).expanduser(), raw, must_exist=must_exist)
    return url


def _check_sqlite_path(path: Path, raw: str, *, must_exist: bool) -> None:
    """Refuse, before any connection, a SQLite path that cannot hold a store."""
    if path.is_dir():
        raise StoreUnusable(f"cannot open the store at {path}: it is a directory; give the store's file, e.g. {path / 'campaign.db'}", option="--db")
    if not path.exists() and path.parent.exists() and not path.parent.is_dir():
        raise StoreUnusable(f"cannot open the store at {path}: {path.parent} is not a directory; give a store path inside a directory", option="--db")
    if must_exist and not path.exists():
        raise UsageProblem(f"no store at {path}; run `campaign db upgrade --db {raw}` first or check the path", option="--db")
    if path.exists():
        if not os.access(path, os.R_OK):
            raise UsageProblem(f"the store {path} is not readable", option="--db")
        # An empty file is an empty SQLite database; anything else must carry the header.
        if not _is_sqlite_file(path):
            raise StoreUnusable(f"cannot open the store at {path}: it is not a SQLite database; give the path of a campaign store, or of a new file to create one", option="--db")
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnusable(f"cannot open the store at {path}: cannot create {path.parent} ({exc.strerror}); give a path in a writable directory", option="--db") from None


def _is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is empty or carries SQLite's header, read through SQLite itself.

    Not with open()/close(): closing any descriptor of a file drops every POSIX lock this
    process holds on it, so a store another engine of this process has open would lose
    its WAL locks, and another process closing its last connection would delete the
    WAL under us. SQLite's own VFS keeps such descriptors open until its locks go."""
    if path.stat().st_size == 0:
        return True
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        conn.execute("PRAGMA schema_version").fetchone()
        return True
    except sqlite3.DatabaseError as exc:
        return "not a database" not in str(exc)
    finally:
        conn.close()


def open_failure(url: URL, exc: BaseException) -> CampaignError:
    """The operator's error for a store that could not be opened: one line naming --db."""
    if isinstance(exc, CampaignError):
        return exc
    reason = (str(getattr(exc, "orig", None) or exc).strip().splitlines() or [exc.__class__.__name__])[0]
    if url.get_backend_name() == "sqlite":
        return StoreUnusable(f"cannot open the store at {describe(url)} ({reason}); give the path of a campaign store, or of a new file in a writable directory", option="--db")
    return StoreUnusable(f"cannot connect to the store at {describe(url)} ({reason}); check the URL, that the server is running, and the credentials", option="--db")


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # Ledger and attempt rows are the evidence; lose none of them to a power cut.
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()


def _sqlite_readonly_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def make_engine(url: URL, *, readonly: bool = False) -> Engine:
    """An engine for ``url``; ``readonly`` opens SQLite files with ``mode=ro``.

    Read-only is enforced by the database, not by inspecting SQL text, so no
    statement given to ``campaign sql`` can change the store.
    """
    if readonly and url.get_backend_name() == "sqlite":
        url = URL.create("sqlite", database=f"file:{url.database}?mode=ro", query={"uri": "true"})
    try:
        engine = create_engine(url)
    except (NoSuchModuleError, ArgumentError, ImportError) as exc:
        raise UsageProblem(
            f"cannot use {url.render_as_string(hide_password=True)!r} ({exc}); give a SQLite file path or a URL such as "
            "sqlite:///PATH or postgresql+psycopg://USER@HOST/DB (pip install '.[postgres]')",
            option="--db",
        ) from None
    if engine.dialect.name == "sqlite" and readonly:
        event.listen(engine, "connect", _sqlite_readonly_pragmas)
    elif engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
        # pysqlite's own transaction handling defers BEGIN; take the lock at BEGIN
        # so compare-and-set admission never races on a stale read.
        @event.listens_for(engine, "begin")
        def _begin_immediate(conn):  # pragma: no cover - exercised by every write
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        @event.listens_for(engine, "connect")
        def _no_implicit_begin(dbapi_connection, _record):
            dbapi_connection.isolation_level = None

    return engine


def describe(url: URL) -> str:
    """A printable location without credentials."""
    if url.get_backend_name() == "sqlite":
        return str(url.database)
    return url.render_as_string(hide_password=True)


__all__ = ["DB_ENV", "StoreError", "default_db_path", "describe", "make_engine", "open_failure", "resolve_url"]
