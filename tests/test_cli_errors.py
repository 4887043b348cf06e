"""Bad stores and unwritable output directories: one line, exit 2, nothing written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from campaign.cli import cli

# Every command that opens an existing store, and the ones that may create one.
STORE_COMMANDS = [
    ["sql", "SELECT 1"],
    ["db", "current"],
    ["db", "tables"],
    ["db", "schema"],
    ["db", "backup"],
    ["db", "check"],
    ["db", "upgrade"],
    ["verify"],
    ["report", "--output", "{tmp}/r.json"],
    ["export", "--output-dir", "{tmp}/shared"],
    ["recover", "--all"],
]


def _bad_store(kind: str, tmp: Path) -> str:
    if kind == "text file":
        (tmp / "notes.txt").write_text("not a database\n")
        return str(tmp / "notes.txt")
    if kind == "directory":
        (tmp / "a-dir").mkdir()
        return str(tmp / "a-dir")
    if kind == "parent is a file":
        (tmp / "plain").write_text("x")
        return str(tmp / "plain" / "campaign.db")
    if kind == "unknown scheme":
        return "nosuchdialect://host/db"
    if kind == "unopenable place":
        # /proc/self refuses new files even to root, unlike a chmod'ed directory.
        return "/proc/self/campaign.db"
    raise AssertionError(kind)


def _one_error_line(result) -> str:
    assert isinstance(result.exception, SystemExit), result.exception  # never a traceback
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    assert "Traceback" not in result.output
    return errors[0]


def _snapshot(tmp: Path) -> dict[str, bytes | None]:
    return {str(p): (p.read_bytes() if p.is_file() else None) for p in sorted(tmp.rglob("*"))}


@pytest.mark.parametrize("kind", ["text file", "directory", "parent is a file", "unknown scheme", "unopenable place"])
@pytest.mark.parametrize("command", STORE_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_store_that_cannot_be_opened_is_bad_input_naming_db(runner, tmp_path, kind, command):
    db = _bad_store(kind, tmp_path)
    before = _snapshot(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    result = runner.invoke(cli, [*args, "--db", db])
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert "--db" in line
    assert _snapshot(tmp_path) == before


def test_an_unreachable_server_is_one_line_naming_db(runner):
    pytest.importorskip("psycopg")
    result = runner.invoke(cli, ["sql", "SELECT 1", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/nothing?connect_timeout=2"])
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert "--db" in line and "cannot connect" in line


# --- output directories that cannot be written ---------------------------------------


def _unwritable_dirs(tmp: Path) -> list[str]:
    (tmp / "plain").write_text("x")
    # Root ignores permission bits: a path under a regular file, and /proc/self, fail for it too.
    return [str(tmp / "plain" / "out"), str(tmp / "plain"), "/proc/self/campaign-out"]


def test_export_into_an_unwritable_directory_is_one_line(runner, engine, db_url, tmp_path):
    for output_dir in _unwritable_dirs(tmp_path):
        before = _snapshot(tmp_path)
        result = runner.invoke(cli, ["export", "--output-dir", output_dir, "--db", db_url])
        assert result.exit_code == 2, result.output
        assert "--output-dir" in _one_error_line(result)
        assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("live", [[], ["--live"]], ids=["dry", "live"])
def test_a_campaign_into_an_unwritable_directory_is_one_line(runner, tmp_path, monkeypatch, live):
    monkeypatch.chdir(tmp_path)
    for output_dir in _unwritable_dirs(tmp_path):
        before = _snapshot(tmp_path)
        args = ["coding", "--campaign", "--tasks", "semver-precedence", "--repetitions", "1", "--output-dir", output_dir, *live]
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert "--output-dir" in _one_error_line(result)
        assert _snapshot(tmp_path) == before


def test_the_text_file_given_as_a_store_is_left_alone(runner, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    for args in (["db", "upgrade"], ["coding", "--output", str(tmp_path / "r.json"), "--tasks", "semver-precedence"]):
        result = runner.invoke(cli, [*args, "--db", str(text)])
        assert result.exit_code == 2, result.output
        assert "not a SQLite database" in _one_error_line(result)
    assert text.read_text() == "not a database\n"
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(text).execute("SELECT 1 FROM sqlite_master").fetchall()


# --- read-only commands leave a store as they found it ---------------------------------


# Every command that only reads the store (outputs go elsewhere).
READ_ONLY = [
    ["verify"],
    ["report", "--output", "{out}/r.json"],
    ["export", "--output-dir", "{out}/shared"],
    ["sql", "SELECT count(*) FROM attempts"],
    ["db", "current"],
    ["db", "check"],
    ["db", "schema"],
    ["db", "tables"],
]


def _beside(store: Path) -> dict[str, bytes]:
    """The store and whatever SQLite put beside it (-wal, -shm, -journal)."""
    return {p.name: p.read_bytes() for p in sorted(store.parent.iterdir())}


@pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: " ".join(c[:2]))
def test_an_empty_file_is_refused_or_shown_and_left_empty(runner, tmp_path, command):
    store = tmp_path / "store" / "campaign.db"
    store.parent.mkdir()
    store.write_bytes(b"")
    args = [a.replace("{out}", str(tmp_path / "out")) for a in command]
    result = runner.invoke(cli, [*args, "--db", str(store)])
    if result.exit_code == 0:
        assert "state: empty" in result.output  # db current says what it found
    else:
        assert result.exit_code == 2, result.output
        assert "--db" in _one_error_line(result)
    assert _beside(store) == {"campaign.db": b""}


@pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: " ".join(c[:2]))
def test_a_store_at_rest_is_byte_for_byte_unchanged_with_nothing_beside_it(runner, engine, db_path, tmp_path, command):
    from test_report_fixtures import full_attempt, insert_campaign, paired_trials

    insert_campaign(engine, paired_trials(["a", "b"], 1, lambda t, r, v: full_attempt(verified_pass=v == "coding")))
    engine.dispose()  # the writer is gone: SQLite removed its -wal and -shm
    before = _beside(db_path)
    assert list(before) == ["campaign.db"]
    args = [a.replace("{out}", str(tmp_path / "out")) for a in command]
    result = runner.invoke(cli, [*args, "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    assert _beside(db_path) == before
