"""Where a failing store becomes the engine's ``StoreError``: one line, naming the store.

Every read and write the engine makes once the store is open goes through one of
these scopes, so a store that fails mid-run (SQLite still locked when its busy
timeout runs out, a full disk, a PostgreSQL server that went away) reaches the
operator as one line that names the store (``--db``, a password never shown)
and what to do (``faults.store_fault``), never as a driver's traceback::

    with scope.transaction(engine) as conn:     # a write: committed at the end, or not at all
        conn.execute(update(...))
    with scope.reading(engine) as conn:         # reads
        rows = conn.execute(select(...)).all()
    with scope.one_state(engine) as conn:       # reads that must all see the same commits
        rows, trials = conn.execute(...).all(), conn.execute(...).all()
    with scope.session(engine) as session:      # ORM rows, still readable after it closes
        return session.get(Campaign, campaign_id)

Only a failing store is translated: the engine's own errors (a lost
compare-and-set, a stop signal) and a constraint the schema refused pass
through unchanged (``faults.REFUSALS``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session

from campaign.errors import Interrupted
from campaign.store.engine import describe
from campaign.store.faults import FAULTS, REFUSALS, store_fault


@contextlib.contextmanager
def guarded(engine: Engine, faults: tuple[type[BaseException], ...] = FAULTS) -> Iterator[None]:
    """Turn a database failure inside the block into ``StoreError``."""
    try:
        yield
    except REFUSALS:
        raise
    except faults as exc:
        # A stop signal raised while the driver was inside a call can come back wrapped in
        # the driver's error: it is still the operator's stop (exit 130), not a failing store.
        stop = _stop_inside(exc)
        if stop is not None:
            raise stop from exc
        raise store_fault(describe(engine.url), engine.url, exc) from exc


def _stop_inside(exc: BaseException) -> BaseException | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, (Interrupted, KeyboardInterrupt)):
            return current
        seen.add(id(current))
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__
    return None


@contextlib.contextmanager
def transaction(engine: Engine) -> Iterator[Connection]:
    """One write transaction, committed when the block ends (rolled back if it raises)."""
    with guarded(engine), engine.begin() as conn:
        yield conn


@contextlib.contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """A connection for reads."""
    with guarded(engine), engine.connect() as conn:
        yield conn


@contextlib.contextmanager
def one_state(engine: Engine) -> Iterator[Connection]:
    """A connection whose reads all see one state of the store: for a check that reads
    several tables of a campaign that may be running (an attempt that finishes between
    its attempt rows and its trial rows would look like a trial finished without its row)."""
    with guarded(engine), engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="REPEATABLE READ")
        elif engine.dialect.name == "sqlite":
            hold_one_state(conn)
        yield conn


def hold_one_state(conn: Connection) -> bool:
    """Begin a SQLite connection's transaction now, so that its reads see one state until it
    ends; True if the engine's own BEGIN IMMEDIATE did (it holds the write lock), False if it
    is a read-only engine's deferred BEGIN (no lock: a reader in WAL mode keeps the state it
    first read while writers go on committing)."""
    conn.exec_driver_sql("SELECT 1")  # the engine's BEGIN IMMEDIATE, if it has one (see store.engine)
    if conn.connection.driver_connection.in_transaction:
        return True
    conn.exec_driver_sql("BEGIN")
    return False


@contextlib.contextmanager
def session(engine: Engine, *, write: bool = False) -> Iterator[Session]:
    """An ORM session whose rows stay readable after it closes; ``write``: in one
    transaction, committed when the block ends."""
    with guarded(engine), Session(engine, expire_on_commit=False) as orm:
        if not write:
            yield orm
            return
        with orm.begin():
            yield orm


__all__ = ["guarded", "hold_one_state", "one_state", "reading", "session", "transaction"]
