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
  engine (``campaign view``'s) takes no lock: its first connection holds a
  deferred read transaction, so the rows and the chain check read on it agree
  with each other; the second reads what is committed when each of its
  statements runs, and may be a commit ahead while a campaign runs (the view
  refreshes when that changes).
- PostgreSQL: the first runs ``REPEATABLE READ`` and exports its snapshot; the
  second imports it (``SET TRANSACTION SNAPSHOT``).
- any other database: there is no second connection, and the work given to it
  runs on the first, in turn.

Work that is mostly Python (not waiting on the database) gains little from a
thread, which holds the lock it needs; ``apart`` runs it in a forked child
instead, on its own connection to the same state (see ``Readers.apart``).

    with snapshot.readers(engine) as read:
        totals = read.apart(sum_things)         # first: a child process, on a third connection
        counts = read.beside(count_things)      # a Future; runs on the second connection
        rows = read.conn.execute(...)           # meanwhile, on the first
        counts.result(), totals.result()
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from campaign.errors import Interrupted
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
    # How a forked child reaches the same state (None: this database has no second reader).
    _engine: Engine | None = None
    _snapshot_id: str | None = None
    _children: list[Child[Any]] = field(default_factory=list)

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

    def apart(self, work: Callable[[Connection], T]) -> Child[T] | Future[T]:
        """Run ``work`` in a forked child on a connection of its own that sees the same
        state, so it runs on another core; or, where a child cannot be forked safely, as
        ``beside`` does. Call it before ``beside``: a child is forked only while this
        process has no other thread (a thread could hold a lock the child would inherit
        held), so a process serving pages from threads gets the thread.

        The child's result comes back pickled. When it gives none (it failed, was killed,
        or its result does not pickle), ``result()`` runs the work here, on the first
        connection, so a failure is the one this process would have had."""
        if not self.forks:
            return self.beside(work)
        try:
            child = Child.fork(work, self._engine, self._snapshot_id, lambda: work(self.conn))
        except OSError:  # no process or no pipe to be had (a limit, memory): a thread, then
            return self.beside(work)
        self._children.append(child)
        return child

    @property
    def forks(self) -> bool:
        """Whether ``apart`` would fork a child now (else it runs work as ``beside`` does)."""
        return self._engine is not None and _can_fork()

    def _end_children(self) -> None:
        for child in self._children:
            child.end()


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and threading.active_count() == 1


class Child(Generic[T]):
    """One forked child running one piece of work; ``result()`` waits for it."""

    def __init__(self, pid: int, fd: int, fallback: Callable[[], T]) -> None:
        self._pid, self._fd, self._fallback = pid, fd, fallback

    @classmethod
    def fork(cls, work: Callable[[Connection], T], engine: Engine, snapshot_id: str | None, fallback: Callable[[], T]) -> Child[T]:
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            raise
        if pid == 0:  # pragma: no cover - the child; its result is what the tests check
            os.close(read_end)
            _child_main(work, engine, snapshot_id, write_end)
        os.close(write_end)
        return cls(pid, read_end, fallback)

    def result(self) -> T:
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
        finally:
            self.end()
        try:
            status, value = pickle.loads(b"".join(chunks))
        except Interrupted:
            raise  # the operator's stop, not a child that died
        except Exception:  # nothing, or not all of it: the child died before it finished
            status, value = "failed", None
        return value if status == "ok" else self._fallback()

    def end(self) -> None:
        """Stop waiting: the child is killed if it still runs, and reaped."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
            self._pid = 0


def _child_main(work: Callable[[Connection], Any], engine: Engine, snapshot_id: str | None, fd: int) -> None:  # pragma: no cover - runs in the child
    """Never returns: the child leaves by ``os._exit``, running none of the parent's
    cleanup (its connections, files and exit handlers are the parent's)."""
    code = 0
    try:
        # A stop signal reaches the whole process group: the parent handles it (and reaps
        # this child); the child just ends, running none of the parent's handlers.
        for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(stop, signal.SIG_DFL)
        if snapshot_id is not None:
            own = make_engine(engine.url)
            with own.connect().execution_options(isolation_level="REPEATABLE READ") as conn:
                conn.exec_driver_sql(f"SET TRANSACTION SNAPSHOT '{snapshot_id}'")
                value = work(conn)
        else:
            own = make_engine(engine.url, readonly=True)
            with own.connect() as conn:
                value = work(conn)
        data = pickle.dumps(("ok", value), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:  # noqa: BLE001 - the parent runs the work itself and meets the error there
        code = 1
    finally:
        os._exit(code)


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
            apart: tuple[Engine | None, str | None] = (engine, exported)
        elif dialect == "sqlite":
            conn = stack.enter_context(engine.connect())
            if scope.hold_one_state(conn):  # BEGIN IMMEDIATE: the write lock, so a reader sees this state too
                shadow = make_engine(engine.url, readonly=True)
                stack.callback(shadow.dispose)
                side = stack.enter_context(shadow.connect())
            else:  # a read-only engine: the second connection reads what is committed when it runs
                side = stack.enter_context(engine.connect())
            apart = (engine, None)
        else:
            conn, side, apart = stack.enter_context(engine.connect()), None, (None, None)
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-side-reader")) if side is not None else None
        read = Readers(conn, side, pool, *apart)
        # Registered last, so it runs first: no child outlives the transaction it reads.
        stack.callback(read._end_children)
        yield read


__all__ = ["Child", "Readers", "readers"]
