"""What a store failing in use is, in the operator's words: locked, full, unreachable.

The driver's exception becomes ``StoreError``: one line that names the store
(``where``: the ``--db`` value with any password hidden), says what happened with
the driver's own first line, and what to do. ``scope`` applies it to every read
and write the engine makes; ``engine.open_failure`` to a store found locked or
full while it is opened (a store that is there, so not bad input).
"""

from __future__ import annotations

import errno
import sqlite3

from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, SQLAlchemyError

from campaign.errors import StoreError

# Errors a driver raises as they are: the scopes read and write nothing else.
FAULTS = (SQLAlchemyError, sqlite3.Error, OSError)
# A constraint the schema enforces turning a row away is no store failing: it passes
# through as it is, as a lost compare-and-set does.
REFUSALS = (IntegrityError, sqlite3.IntegrityError)

# What a failure's text says, as SQLite and PostgreSQL word it.
_LOCKED = ("database is locked", "database table is locked")
_FULL = ("database or disk is full", "no space left on device", "could not extend file", "disk full")
# PostgreSQL's disk_full; its connection_exception class is 08xxx.
_PG_FULL = "53100"
_AGAIN = "then run the command again (a campaign continues with --resume)"


def kind(url: URL, exc: BaseException) -> str:
    """``locked``, ``full``, ``unreachable`` or ``failed``."""
    text = reason(url, exc).lower()
    if any(word in text for word in _LOCKED):
        return "locked"
    if _sqlstate(exc) == _PG_FULL or _errno(exc) == errno.ENOSPC or any(word in text for word in _FULL):
        return "full"
    if _lost(url, exc):
        return "unreachable"
    return "failed"


def store_fault(where: str, url: URL, exc: BaseException) -> StoreError:
    """The operator's line for the store at ``where`` failing with ``exc``."""
    why = reason(url, exc)
    return StoreError(
        {
            "locked": f"the store at {where} stayed locked by another process past its busy timeout ({why}); let that process finish or stop it, {_AGAIN}",
            "full": f"the store at {where} could not write: its disk is full ({why}); free space there, {_AGAIN}",
            "unreachable": f"the store at {where} cannot be reached ({why}); check that its server is running and reachable, {_AGAIN}",
            "failed": f"the store at {where} failed ({why}); check it with `campaign db check` and `campaign verify`, {_AGAIN}",
        }[kind(url, exc)]
    )


def reason(url: URL, exc: BaseException) -> str:
    """The driver's first line (never SQLAlchemy's wrapper or its statement), bounded,
    with the URL's password cut out should a driver repeat it."""
    cause = getattr(exc, "orig", None) or exc
    if isinstance(cause, OSError) and cause.strerror:
        text = cause.strerror
    else:
        text = next((line.strip() for line in str(cause).splitlines() if line.strip()), type(cause).__name__)
    if url.password:
        text = text.replace(str(url.password), "***")
    return text[:200]


def _lost(url: URL, exc: BaseException) -> bool:
    """The connection is gone: SQLAlchemy saw a disconnect, the driver's error is of
    PostgreSQL's connection class (or, from a server, an operational error: a refused or
    dropped connection), or the socket itself failed."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    state = _sqlstate(exc)
    if state is not None and state.startswith("08"):
        return True
    if url.get_backend_name() != "sqlite" and isinstance(exc, OperationalError):
        return True
    return isinstance(getattr(exc, "orig", None) or exc, ConnectionError)


def _sqlstate(exc: BaseException) -> str | None:
    state = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return state if isinstance(state, str) else None


def _errno(exc: BaseException) -> int | None:
    cause = getattr(exc, "orig", None) or exc
    return cause.errno if isinstance(cause, OSError) else None


__all__ = ["FAULTS", "REFUSALS", "kind", "reason", "store_fault"]
