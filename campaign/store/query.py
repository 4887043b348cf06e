"""Read-only ad-hoc SQL. The database enforces read-only; we never parse SQL text."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, StatementError

from campaign.errors import ReadOnlyViolation, StoreError, UsageProblem
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import schema_state

_WRITE_MARKERS = ("readonly database", "read-only transaction", "read only", "query_only")


def run_readonly(db: str | None, statement: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    if not statement.strip():
        raise UsageProblem("give one SQL statement, e.g. \"SELECT * FROM attempts\"", option="STATEMENT")
    url = resolve_url(db, must_exist=True)
    engine = make_engine(url, readonly=True)
    try:
        if schema_state(engine) == "empty":
            raise UsageProblem("the store is empty; run `campaign db upgrade` first", option="--db")
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            try:
                result = conn.execute(text(statement))
                columns = list(result.keys()) if result.returns_rows else []
                rows = [tuple(row) for row in result] if result.returns_rows else []
            except (DBAPIError, StatementError) as exc:
                message = str(getattr(exc, "orig", exc)).splitlines()[0]
                if any(marker in message.lower() for marker in _WRITE_MARKERS):
                    raise ReadOnlyViolation("campaign sql is read-only; the statement would change the store and was refused", option="STATEMENT") from None
                raise StoreError(f"SQL error: {message}") from None
            finally:
                conn.rollback()
        return columns, rows
    finally:
        engine.dispose()


def format_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([dict(zip(columns, row)) for row in rows], indent=2, default=str) + "\n"
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
