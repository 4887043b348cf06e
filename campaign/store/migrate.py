"""Schema ownership: alembic config built in code, revision checks, upgrade, backup.

A store is opened only at head. An empty store is brought to head through the
migrations (never ``create_all``); an older one is refused with the command that
upgrades it; a newer one is refused outright.

Opening a store at head needs no alembic: every ``campaign`` process opens one (a
worker, a recovery, a report), and importing alembic cost each a quarter of a second.
The head is read from the migration files' own ``revision`` / ``down_revision`` lines
(``tests/test_store_migrations.py`` holds it equal to alembic's), the store's revision
from its ``alembic_version`` table. Upgrades, drift checks and anything unusual (more
than one row there) go through alembic, imported then.
"""

from __future__ import annotations

import re
import datetime as dt
import importlib.util
import tempfile
from pathlib import Path

import functools
from typing import TYPE_CHECKING

from sqlalchemy import Engine, MetaData, inspect, text
from sqlalchemy.engine import URL
from sqlalchemy.schema import CreateIndex, CreateTable

from campaign.errors import Interrupted, SchemaAhead, SchemaBehind, StoreError, UsageProblem
from campaign.store.base import Base
from campaign.store.engine import describe, make_engine, open_failure, resolve_url

if TYPE_CHECKING:
    from alembic.config import Config


def migrations_dir() -> Path:
    """Installed wheels carry ``campaign.migrations``; a source checkout has ``migrations/``."""
    spec = importlib.util.find_spec("campaign.migrations")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parents[2] / "migrations"


def alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    return config


_REVISION_LINE = re.compile(r"""^(down_revision|revision)\s*(?::[^=]*)?=\s*(?:['"]([^'"]+)['"]|None)\s*$""", re.MULTILINE)


@functools.lru_cache(maxsize=1)
def _revisions() -> dict[str, str | None]:
    """revision -> down_revision, read from the migration files' text (no import)."""
    graph: dict[str, str | None] = {}
    for path in sorted((migrations_dir() / "versions").glob("*.py")):
        found = {m.group(1): m.group(2) for m in _REVISION_LINE.finditer(path.read_text(encoding="utf-8"))}
        if "revision" in found and found["revision"] is not None:
            graph[found["revision"]] = found.get("down_revision")
    return graph


def head_revision() -> str:
    graph = _revisions()
    heads = set(graph) - {down for down in graph.values() if down is not None}
    assert len(heads) == 1, f"the migrations directory must have one head, not {sorted(heads)}"
    return next(iter(heads))


def known_revisions() -> set[str]:
    return set(_revisions())


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if inspect(conn).has_table("alembic_version"):
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
            if len(rows) <= 1:
                return rows[0] if rows else None
        from alembic.migration import MigrationContext

        return MigrationContext.configure(conn).get_current_revision()


def upgrade_engine(engine: Engine, revision: str = "head") -> None:
    from alembic import command

    config = alembic_config()
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:
            # Batch mode rebuilds a table by copy, drop and rename; with foreign keys
            # enforced, dropping a table that others reference fails. Off for the
            # rebuild (the pragma is ignored inside a transaction, hence the raw
            # connection), and every reference proven intact before the commit.
            conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                config.attributes["connection"] = conn
                command.upgrade(config, revision)
                if sqlite and conn.exec_driver_sql("PRAGMA foreign_key_check").first() is not None:
                    raise StoreError("the upgrade would leave rows pointing at missing rows; nothing was changed")
        finally:
            if sqlite:
                conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=ON")


def schema_state(engine: Engine) -> str:
    """'empty', 'head', 'behind', 'ahead', or 'foreign': tables, but neither a revision
    nor a campaigns table (another program's database, never upgraded into a store)."""
    tables = inspect(engine).get_table_names()
    if not tables:
        return "empty"
    current = current_revision(engine)
    if current == head_revision():
        return "head"
    if current is None and "campaigns" not in tables:
        return "foreign"
    if current is None or current in known_revisions():
        return "behind"
    return "ahead"


def _state_before_opening(url: URL) -> str | None:
    """An existing SQLite file's state, read through a read-only engine: refusing a file
    must not change it (a read-write connection turns on WAL, and writes a header into
    an empty file). None: no file there yet, or not SQLite."""
    if url.get_backend_name() != "sqlite" or not Path(str(url.database)).is_file():
        return None
    probe = make_engine(url, readonly=True)
    try:
        return schema_state(probe)
    except Interrupted:
        raise  # the operator's stop, not a store that cannot be opened
    except Exception as exc:  # a file that is not a database
        raise open_failure(url, exc) from None
    finally:
        probe.dispose()


def _refuse(url: URL, state: str, *, create: bool) -> None:
    """The refusal of a store in ``state`` that cannot be opened as it is."""
    if state == "empty" and not create:
        raise UsageProblem(f"{describe(url)} holds no campaign store; run `campaign db upgrade`", option="--db")
    if state == "foreign":
        raise UsageProblem(f"{describe(url)} is a database with tables that are not a campaign store; give the path of a campaign store, or of a new file", option="--db")
    if state == "behind":
        raise SchemaBehind(f"the store at {describe(url)} is at an older schema; run `campaign db upgrade` (it takes a backup first)")


def open_store(db: str | None, *, create: bool = True, readonly: bool = False) -> Engine:
    """Engine for a store at head; migrates an empty store (unless not ``create``), refuses any other.

    ``readonly``: an engine that cannot write, for an existing store only; the
    store is left byte for byte as it was, with no ``-wal``/``-shm`` beside it.
    """
    create = create and not readonly
    url = resolve_url(db, must_exist=not create)
    found = _state_before_opening(url)
    if found is not None and found not in ("head", "ahead"):
        _refuse(url, found, create=create)
    engine = make_engine(url, readonly=readonly)
    try:
        state = schema_state(engine)
    except Interrupted:
        raise  # the operator's stop, not a store that cannot be opened
    except Exception as exc:  # a file that is not a database, a refused connection
        engine.dispose()
        raise open_failure(url, exc) from None
    if state == "empty" and create:
        upgrade_engine(engine)
    elif state in ("empty", "foreign", "behind"):
        engine.dispose()
        _refuse(url, state, create=create)
    elif state == "ahead":
        engine.dispose()
        raise SchemaAhead(f"the store at {describe(url)} was written by a newer campaign (revision {current_revision(engine)}); upgrade campaign, do not downgrade the store")
    return engine


def drift(engine: Engine) -> list[str]:
    """Differences between the models and the migrated schema (empty when in sync)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        return [repr(diff) for diff in compare_metadata(ctx, Base.metadata)]


def check_models_against_migrations(db: str | None = None) -> list[str]:
    """Drift between the models and a fresh store migrated to head; and the given store."""
    with tempfile.TemporaryDirectory(prefix="campaign-check-") as tmp:
        fresh = make_engine(URL.create("sqlite", database=str(Path(tmp) / "check.db")))
        try:
            upgrade_engine(fresh)
            problems = [f"migrations: {line}" for line in drift(fresh)]
        finally:
            fresh.dispose()
    if db:
        engine = open_store(db, readonly=True)
        try:
            problems += [f"store: {line}" for line in drift(engine)]
        finally:
            engine.dispose()
    return problems


def schema_sql() -> str:
    """The CREATE statements of a fresh store at head: the documented schema."""
    with tempfile.TemporaryDirectory(prefix="campaign-schema-") as tmp:
        fresh = make_engine(URL.create("sqlite", database=str(Path(tmp) / "schema.db")))
        try:
            upgrade_engine(fresh)
            return store_schema_sql(fresh)
        finally:
            fresh.dispose()


def store_schema_sql(engine: Engine) -> str:
    """The CREATE statements of the store behind ``engine``: SQLite's own text, reflected elsewhere."""
    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            rows = conn.exec_driver_sql(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, name"
            ).all()
            # A table SQLite rebuilt for a migration keeps its name quoted; the documented schema does not.
            texts = [_constraints_sorted(re.sub(r'^CREATE TABLE "(\w+)"', r"CREATE TABLE \1", row[0].strip())) for row in rows]
        else:
            meta = MetaData()
            meta.reflect(conn)
            texts = [str(CreateTable(t).compile(conn)).strip() for t in meta.sorted_tables]
            texts += [str(CreateIndex(i).compile(conn)).strip() for t in meta.sorted_tables for i in sorted(t.indexes, key=lambda i: i.name or "")]
    statements = ("\n".join(line.rstrip() for line in text.splitlines()) + ";" for text in texts)
    return "\n\n".join(statements) + "\n"


def _constraints_sorted(create: str) -> str:
    """A CREATE TABLE with its CONSTRAINT lines in name order.

    alembic's batch mode rebuilds a SQLite table with its constraints in set
    order, which differs from run to run; the documented schema must not."""
    lines = create.splitlines()
    at = [i for i, line in enumerate(lines) if line.strip().startswith("CONSTRAINT ")]
    if not at:
        return create
    body = sorted(lines[i].strip().rstrip(",") for i in at)
    last = at[-1] + 1 < len(lines) and lines[at[-1] + 1].strip().startswith(")")
    indent = lines[at[0]][: len(lines[at[0]]) - len(lines[at[0]].lstrip())]
    rebuilt = [f"{indent}{entry}{'' if last and n == len(body) - 1 else ','}" for n, entry in enumerate(body)]
    out = list(lines)
    for i, entry in zip(at, rebuilt):
        out[i] = entry
    return "\n".join(out)


def backup(engine: Engine, dest: Path) -> Path:
    """A consistent copy of a SQLite store (``VACUUM INTO`` sees one snapshot)."""
    if engine.dialect.name != "sqlite":
        raise UsageProblem("backup copies SQLite stores only; use your database's own tools (pg_dump) for others", option="--db")
    dest = Path(dest).expanduser().resolve()
    if dest.exists():
        raise UsageProblem(f"{dest} already exists; choose a new backup path", option="--output")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # VACUUM cannot run inside a transaction, so bypass SQLAlchemy's autobegin.
    raw = engine.raw_connection()
    try:
        raw.driver_connection.execute("VACUUM INTO ?", (str(dest),))
    finally:
        raw.close()
    return dest


def default_backup_path(url: URL) -> Path:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    return Path(str(url.database) + f".backup-{stamp}")


def upgrade_store(db: str | None) -> tuple[str | None, str, Path | None]:
    """Bring a store to head, backing up a non-empty SQLite store first.

    Returns (revision before, revision after, backup path or None).
    """
    url = resolve_url(db)
    if _state_before_opening(url) == "foreign":
        _refuse(url, "foreign", create=True)
    engine = make_engine(url)
    try:
        try:
            state = schema_state(engine)
        except Interrupted:
            raise  # the operator's stop, not a store that cannot be opened
        except Exception as exc:  # a file that is not a database, a refused connection
            raise open_failure(url, exc) from None
        if state == "foreign":
            _refuse(url, state, create=True)
        before = None if state == "empty" else current_revision(engine)
        if state == "ahead":
            raise SchemaAhead(f"the store at {describe(url)} is at revision {before}, newer than this campaign's head {head_revision()}; upgrade campaign instead")
        saved = None
        if state == "behind" and engine.dialect.name == "sqlite":
            saved = backup(engine, default_backup_path(url))
        if state != "head":
            upgrade_engine(engine)
        return before, head_revision(), saved
    finally:
        engine.dispose()


def ping(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))
