"""Read-only ad-hoc SQL. The database enforces read-only (SQLite's authorizer refuses ATTACH
and pragma writes); we never parse SQL text. Also the store's tables and schema, read-only."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Engine, func, inspect, select, table
from sqlalchemy.exc import DBAPIError, StatementError

from campaign.errors import Interrupted, ReadOnlyViolation, StoreError, UsageProblem
from campaign.store.engine import make_engine, open_failure, resolve_url
from campaign.store.migrate import schema_state, store_schema_sql

_WRITE_MARKERS = ("readonly database", "read-only transaction", "read only", "query_only")

# Pragmas whose argument names a table or index to describe; any other pragma
# given a value would change the connection or the store.
_DESCRIBING_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_info", "index_xinfo", "index_list", "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check"}
)


class _ReadOnlyAuthorizer:
    """SQLite authorizer for ``campaign sql``: denies ATTACH/DETACH (and VACUUM INTO) and pragma writes.

    The ``mode=ro`` connection already refuses writes to the store; ATTACH would
    still open (and create) another file, and a pragma write would change the
    connection or fail as an opaque I/O error. Denials are recorded to name them.
    """

    def __init__(self) -> None:
        self.denied: list[str] = []

    def __call__(self, action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
        if action == sqlite3.SQLITE_ATTACH:
            # ATTACH and VACUUM INTO both reach SQLite as an attach of the file they name.
            self.denied.append(f"opening another database file ({arg1!r}, by ATTACH or VACUUM INTO)")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_DETACH:
            self.denied.append("DETACH")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and arg2 is not None and (arg1 or "").lower() not in _DESCRIBING_PRAGMAS:
            self.denied.append(f"PRAGMA {arg1} = {arg2}")
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK


@contextlib.contextmanager
def _readonly_store(db: str | None) -> Iterator[Engine]:
    """A read-only engine on an existing store at any revision; refuses an empty one."""
    url = resolve_url(db, must_exist=True)
    engine = make_engine(url, readonly=True)
    try:
        try:
            state = schema_state(engine)
        except Interrupted:
            raise  # the operator's stop, not a store that cannot be opened
        except Exception as exc:  # a file that is not a database, a refused connection
            raise open_failure(url, exc) from None
        if state == "empty":
            raise UsageProblem("the store is empty; run `campaign db upgrade` first", option="--db")
        yield engine
    finally:
        engine.dispose()


def _let_signal_handlers_run() -> int:
    return 0


def run_readonly(db: str | None, statement: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    if not statement.strip():
        raise UsageProblem("give one SQL statement, e.g. \"SELECT * FROM attempts\"", option="STATEMENT")
    try:
        statement.encode("utf-8")
    except UnicodeEncodeError:  # argv bytes that are not UTF-8 arrive as lone surrogates
        raise UsageProblem("the statement is not UTF-8 text; nothing was run", option="STATEMENT") from None
    with _readonly_store(db) as engine, engine.connect() as conn:
        authorizer = _ReadOnlyAuthorizer()
        driver = conn.connection.driver_connection
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
        elif conn.dialect.name == "sqlite":
            driver.set_authorizer(authorizer)
            # A query runs in SQLite's C code, where a stop signal's handler cannot run:
            # this Python callback, every so many steps, lets it run, and its Interrupted
            # aborts the query ("interrupted"), which is then the operator's stop.
            driver.set_progress_handler(_let_signal_handlers_run, 10_000)
        try:
            # Sent as it is: text() would read ":name" inside a string literal as a parameter.
            result = conn.execution_options(no_parameters=True).exec_driver_sql(statement)
            # psycopg runs every statement of a multi-statement text (sqlite3 refuses it up front);
            # read-only and rolled back, they changed nothing, but only one result would be shown.
            if conn.dialect.name == "postgresql" and result.cursor is not None and result.cursor.nextset():
                raise UsageProblem("more than one statement; give one (they ran read-only and changed nothing)", option="STATEMENT")
            columns = list(result.keys()) if result.returns_rows else []
            rows = [tuple(row) for row in result] if result.returns_rows else []
        except (DBAPIError, StatementError) as exc:
            if authorizer.denied:
                raise ReadOnlyViolation(f"the SQL console is read-only; {authorizer.denied[0]} is refused (it would change the store, the connection or another file)", option="STATEMENT") from None
            message = str(getattr(exc, "orig", exc)).splitlines()[0]
            if isinstance(getattr(exc, "orig", None), sqlite3.OperationalError) and message == "interrupted":
                raise Interrupted("the query was stopped before it finished; nothing was changed") from None
            if isinstance(getattr(exc, "orig", None), sqlite3.ProgrammingError):
                # Raised before anything runs: more than one statement, or placeholders without values.
                raise UsageProblem(f"{message.rstrip('.')}; give one statement without placeholders, nothing was run", option="STATEMENT") from None
            if any(marker in message.lower() for marker in _WRITE_MARKERS):
                raise ReadOnlyViolation("campaign sql is read-only; the statement would change the store and was refused", option="STATEMENT") from None
            raise StoreError(f"SQL error: {message}") from None
        finally:
            if conn.dialect.name == "sqlite":
                driver.set_authorizer(None)
                driver.set_progress_handler(None, 0)
            conn.rollback()
    return columns, rows


def table_counts(db: str | None) -> list[tuple[str, int]]:
    """Every table of the store with its row count, read-only."""
    with _readonly_store(db) as engine, engine.connect() as conn:
        names = sorted(inspect(conn).get_table_names())
        return [(name, conn.execute(select(func.count()).select_from(table(name))).scalar_one()) for name in names]


def schema_of(db: str | None) -> str:
    """The CREATE statements of an existing store, read-only."""
    with _readonly_store(db) as engine:
        return store_schema_sql(engine)


def format_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str) -> str:
    if fmt == "json":
        # Strict JSON: an infinity (SQLite's 1e999) is written as its text, never as a bare Infinity.
        rows = [tuple(str(v) if type(v) is float and not math.isfinite(v) else v for v in row) for row in rows]
        return json.dumps([dict(zip(columns, row)) for row in rows], indent=2, default=str, allow_nan=False) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        return out.getvalue()
    return _table(columns, rows)


def _cell(value: Any) -> str:
    return "NULL" if value is None else str(value)


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    if not columns:
        return ""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines) + "\n"
