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
def session(engine: Engine, *, write: bool = False) -> Iterator[Session]:
    """An ORM session whose rows stay readable after it closes; ``write``: in one
    transaction, committed when the block ends."""
    with guarded(engine), Session(engine, expire_on_commit=False) as orm:
        if not write:
            yield orm
            return
        with orm.begin():
            yield orm


__all__ = ["guarded", "reading", "session", "transaction"]
