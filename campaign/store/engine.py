"""Engine factory: URL resolution and the SQLite pragmas every connection needs."""

from __future__ import annotations

import os
import sqlite3
import stat
import urllib.parse
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import NullPool

from campaign import inputs
from campaign.store import faults
from campaign.errors import CampaignError, StoreError, StoreUnusable, UsageProblem

DB_ENV = "CAMPAIGN_DB"
# How long a SQLite write waits for another writer's lock before the store is reported
# locked; a URL's own ``?timeout=SECONDS`` (pysqlite's argument) sets another.
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
        # realpath, unlike Path.resolve on Python 3.11, leaves a symlink loop for the check below to name.
        url = URL.create("sqlite", database=os.path.realpath(Path(raw).expanduser()))
    if url.get_backend_name() == "sqlite":
        busy_timeout_ms(url)  # a bad ?timeout= is bad input, refused before any file is touched
        database = url.database
        if not database or database == ":memory:":
            raise UsageProblem("an in-memory SQLite store would lose every trial; give a file path", option="--db")
        path = Path(database).expanduser()
        if not check_sqlite_path(path, raw, must_exist=must_exist):
            _make_parent(path)
    return url


def check_sqlite_path(path: Path, raw: str, *, must_exist: bool) -> bool:
    """Refuse, before any connection, a SQLite path that cannot hold a store; True when the file exists.

    Only an absent path (a new store) or a regular SQLite file passes: a FIFO
    would block the header read, and a device or directory is no store. Reads
    the header through SQLite, never writes.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise StoreUnusable(f"cannot open the store at {path}: {path.parent} is not a directory; give a store path inside a directory", option="--db") from None
    except OSError as exc:
        raise StoreUnusable(f"cannot open the store at {path}: it {inputs.stat_problem(exc)}; give the store's file", option="--db") from None
    if st is None:
        if must_exist:
            raise UsageProblem(f"no store at {path}; run `campaign db upgrade --db {raw}` first or check the path", option="--db")
        return False
    if stat.S_ISDIR(st.st_mode):
        raise StoreUnusable(f"cannot open the store at {path}: it is a directory; give the store's file, e.g. {path / 'campaign.db'}", option="--db")
    kind = inputs.kind_of(st.st_mode)
    if kind is not None:
        raise StoreUnusable(f"cannot open the store at {path}: it is {kind}; give the store's file", option="--db")
    # An empty file is an empty SQLite database; anything else must carry the header.
    if st.st_size and not _is_sqlite_file(path):
        raise StoreUnusable(f"cannot open the store at {path}: it is not a SQLite database; give the path of a campaign store, or of a new file to create one", option="--db")
    return True


def _is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` carries SQLite's header, read through SQLite itself.

    Not with open()/close(): closing any descriptor of a file drops every POSIX lock
    this process holds on it, so a store another engine of this process has open
    would lose its WAL locks, and another process closing its last connection would
    then delete the WAL under it. SQLite's own VFS keeps such a descriptor open
    until its locks are gone; ``immutable`` reads without locks or shared memory
    and leaves no ``-wal``/``-shm`` beside a store nobody has open."""
    try:
        conn = sqlite3.connect(f"file:{_quoted(path)}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return False
    try:
        conn.execute("PRAGMA schema_version").fetchone()
        return True
    except sqlite3.DatabaseError as exc:
        return "not a database" not in str(exc)
    finally:
        conn.close()


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnusable(f"cannot open the store at {path}: cannot create {path.parent} ({exc.strerror}); give a path in a writable directory", option="--db") from None


def open_failure(url: URL, exc: BaseException) -> CampaignError:
    """The operator's error for a store that could not be opened: one line naming --db.

    A store found locked or on a full disk is there and is no bad input: it fails as
    it would in use (``faults.store_fault``)."""
    if isinstance(exc, CampaignError):
        return exc
    if faults.kind(url, exc) in ("locked", "full"):
        return faults.store_fault(describe(url), url, exc)
    reason = (str(getattr(exc, "orig", None) or exc).strip().splitlines() or [exc.__class__.__name__])[0]
    if url.get_backend_name() == "sqlite":
        return StoreUnusable(f"cannot open the store at {describe(url)} ({reason}); give the path of a campaign store, or of a new file in a writable directory", option="--db")
    return StoreUnusable(f"cannot connect to the store at {describe(url)} ({reason}); check the URL, that the server is running, and the credentials", option="--db")


def busy_timeout_ms(url: URL) -> int:
    """The SQLite busy timeout: the URL's ``timeout`` in seconds, else ``BUSY_TIMEOUT_MS``."""
    given = url.query.get("timeout")
    if given is None:
        return BUSY_TIMEOUT_MS
    try:
        seconds = float(given if isinstance(given, str) else given[-1])
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 86_400:
        raise UsageProblem(f"timeout={given!r} in the store URL must be a number of seconds from 0 to 86400", option="--db")
    return int(seconds * 1000)


def _sqlite_pragmas(busy_ms: int):
    def connect(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        # Ledger and attempt rows are the evidence; lose none of them to a power cut.
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.close()

    return connect


def _sqlite_readonly_pragmas(busy_ms: int):
    def connect(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        cursor.execute("PRAGMA query_only=ON")
        cursor.close()

    return connect


def make_engine(url: URL, *, readonly: bool = False) -> Engine:
    """An engine for ``url``; ``readonly`` is one that cannot write (see ``_readonly_engine``).

    Read-only is enforced by the database, not by inspecting SQL text, so no
    statement given to ``campaign sql`` can change the store.
    """
    if readonly:
        return _readonly_engine(url)
    engine = _create(url)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas(busy_timeout_ms(url)))
        # pysqlite's own transaction handling defers BEGIN; take the lock at BEGIN
        # so compare-and-set admission never races on a stale read.
        @event.listens_for(engine, "begin")
        def _begin_immediate(conn):  # pragma: no cover - exercised by every write
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        @event.listens_for(engine, "connect")
        def _no_implicit_begin(dbapi_connection, _record):
            dbapi_connection.isolation_level = None

    return engine


def _readonly_engine(url: URL) -> Engine:
    """An engine that cannot write, and leaves a store it did not create as it found it.

    SQLite: ``mode=ro``, so the database itself refuses writes. A read-only
    connection to a WAL-mode file still creates ``-wal`` and ``-shm`` beside it
    and cannot remove them when it closes; so when there is no ``-wal`` (no
    connection has the store open: the last one to close removes it) the file
    is opened ``immutable`` as well, which reads it without locks or shared
    memory and creates nothing. A writer that starts meanwhile appends to its
    own WAL; the main file changes only at a checkpoint, which it reaches after
    1000 pages or when it closes. Every checkout decides anew (no pool), so a
    long-lived reader such as ``campaign view`` follows a writer that starts
    later. PostgreSQL: every transaction of the session is read-only.
    """
    if url.get_backend_name() == "postgresql":
        return _create(_read_only_session(url))
    if url.get_backend_name() != "sqlite":
        return _create(url)
    path = Path(str(url.database))
    engine = _create(url, creator=lambda: sqlite3.connect(_readonly_uri(path), uri=True, check_same_thread=False), poolclass=NullPool)
    event.listen(engine, "connect", _sqlite_readonly_pragmas(busy_timeout_ms(url)))
    return engine


def _readonly_uri(path: Path) -> str:
    """The SQLite URI that opens ``path`` read-only, immutable when no writer has it open
    (a store is always in WAL mode, and the last writer to close removes the ``-wal``).
    Decided without opening the file outside SQLite (see ``_is_sqlite_file``)."""
    quiet = not Path(f"{path}-wal").exists()
    return f"file:{_quoted(path)}?mode=ro" + ("&immutable=1" if quiet else "")


def _quoted(path: Path) -> str:
    """``path`` for a SQLite URI: its own bytes, percent-encoded (a name that is not UTF-8
    has no str that would quote to it)."""
    return urllib.parse.quote(os.fsencode(path))


def _read_only_session(url: URL) -> URL:
    """libpq's ``options`` sets the server parameter at connection start, so no statement can forget it."""
    flag = "-c default_transaction_read_only=on"
    existing = url.query.get("options")
    existing = " ".join(existing) if isinstance(existing, tuple) else existing
    return url.update_query_dict({"options": f"{existing} {flag}" if existing else flag})


def _create(url: URL, **kwargs) -> Engine:
    try:
        return create_engine(url, **kwargs)
    except (NoSuchModuleError, ArgumentError, ImportError) as exc:
        raise UsageProblem(
            f"cannot use {url.render_as_string(hide_password=True)!r} ({exc}); give a SQLite file path or a URL such as "
            "sqlite:///PATH or postgresql+psycopg://USER@HOST/DB (pip install '.[postgres]')",
            option="--db",
        ) from None


def change_stamp(engine: Engine) -> tuple[Any, ...] | None:
    """What moves whenever anyone commits to the store, whichever row they touch (None:
    nothing tells). A reader that keeps a verdict per chain head keys it on this too, so
    an edit to an older row, a trial or a campaign row is noticed at once.

    SQLite: the file and its WAL (inode, size, mtime); a commit appends to the WAL, a
    checkpoint rewrites the file. PostgreSQL: the next transaction id, which every
    writing transaction on the server takes (reads take none)."""
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        if not database or database == ":memory:":
            return None
        return tuple(_file_stamp(path) for path in (database, f"{database}-wal"))
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            return (conn.exec_driver_sql("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").scalar_one(),)
    return None


def _file_stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def describe(url: URL) -> str:
    """A printable location without credentials."""
    if url.get_backend_name() == "sqlite":
        return str(url.database)
    return url.render_as_string(hide_password=True)


__all__ = ["DB_ENV", "StoreError", "change_stamp", "check_sqlite_path", "default_db_path", "describe", "make_engine", "open_failure", "resolve_url"]
