"""Two connections that read one state of the store, so that a reader can work in parallel.

A report reads every attempt row on one connection (to prove the hash chain and
build its per-trial rows in Python) while the database counts and sums on the
other, in a thread: SQLite and PostgreSQL do that work without holding Python's
lock, so the two overlap. Both must see exactly the same rows, or a report could
count an attempt in one section and miss it in another:

- SQLite: the first connection's transaction begins ``IMMEDIATE`` (every
  transaction of the engine's does, see ``store.engine``), so it holds the write
  lock and nothing commits until it ends; the second is a read-only connection
  (it takes no lock), which therefore sees what the first sees. A read-only
  engine (``campaign view``'s) takes no lock and holds no transaction: each of
  its statements, on either connection, reads what is committed when it runs,
  as they always did on its one connection; the view refreshes when that changes.
- PostgreSQL: the first runs ``REPEATABLE READ`` and exports its snapshot; the
  second imports it (``SET TRANSACTION SNAPSHOT``).
- any other database: there is no second connection, and the work given to it
  runs on the first, in turn.

    with snapshot.readers(engine) as read:
        counts = read.beside(count_things)      # a Future; runs on the second connection
        rows = read.conn.execute(...)           # meanwhile, on the first
        counts.result()
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from campaign.store import scope
from campaign.store.engine import make_engine

T = TypeVar("T")
_SNAPSHOT_ID = re.compile(r"[0-9A-Fa-f]+-[0-9A-Fa-f]+(?:-[0-9]+)?")
# The block is the caller's code too: an OSError there is its own (a report's file), not the store's.
DATABASE_FAULTS = (SQLAlchemyError, sqlite3.Error)


@dataclass
class Readers:
    conn: Connection
    _side: Connection | None
    _pool: ThreadPoolExecutor | None

    def beside(self, work: Callable[[Connection], T]) -> Future[T]:
        """Run ``work`` on the second connection (in order with earlier work given to it)."""
        if self._pool is None or self._side is None:
            done: Future[T] = Future()
            try:
                done.set_result(work(self.conn))
            except BaseException as exc:  # handed to whoever asks for the result, as a thread would
                done.set_exception(exc)
            return done
        return self._pool.submit(work, self._side)


@contextlib.contextmanager
def readers(engine: Engine) -> Iterator[Readers]:
    """A connection in a transaction, and a second one seeing the same state (see the module).

    A database failure inside the block, the caller's reads included, is the engine's
    ``StoreError`` (``scope.guarded``); any other error of the caller's passes as it is."""
    dialect = engine.dialect.name
    with scope.guarded(engine, DATABASE_FAULTS), contextlib.ExitStack() as stack:
        if dialect == "postgresql":
            conn = stack.enter_context(engine.connect().execution_options(isolation_level="REPEATABLE READ"))
            exported = conn.exec_driver_sql("SELECT pg_export_snapshot()").scalar_one()
            if not _SNAPSHOT_ID.fullmatch(exported):
                raise ValueError(f"unexpected snapshot id from the server: {exported!r}")
            side = stack.enter_context(engine.connect().execution_options(isolation_level="REPEATABLE READ"))
            side.exec_driver_sql(f"SET TRANSACTION SNAPSHOT '{exported}'")
        elif dialect == "sqlite":
            conn = stack.enter_context(engine.connect())
            conn.exec_driver_sql("SELECT 1")  # begins the transaction: BEGIN IMMEDIATE takes the write lock
            if conn.connection.driver_connection.in_transaction:
                shadow = make_engine(engine.url, readonly=True)
                stack.callback(shadow.dispose)
                side = stack.enter_context(shadow.connect())
            else:  # a read-only engine: each statement reads what is committed when it runs
                side = stack.enter_context(engine.connect())
        else:
            conn, side = stack.enter_context(engine.connect()), None
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-side-reader")) if side is not None else None
        yield Readers(conn, side, pool)


__all__ = ["Readers", "readers"]
