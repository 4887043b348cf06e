"""`campaign sql`: read-only by construction, three output formats."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest
from helpers.procs import wait_for

from campaign.cli import cli


@pytest.fixture
def seeded(engine, db_path):
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO campaigns (kind, state, live, agent, seed, experiment_json, experiment_digest, scheduled_count, created_at, stop_reason)"
            " VALUES ('paired', 'planned', 0, 'offline', 107, '{}', 'abc', 4, '2026-01-01 00:00:00', NULL)"
        )
    return db_path


def _count(db_path):
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT count(*) FROM campaigns").fetchone()[0]


def test_table_output_is_aligned_and_shows_null(runner, seeded):
    result = runner.invoke(cli, ["sql", "SELECT kind, seed, stop_reason FROM campaigns", "--db", str(seeded)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["kind", "seed", "stop_reason"]
    assert set(lines[1]) <= {"-", " "}
    assert lines[2].split() == ["paired", "107", "NULL"]
    assert lines[0].index("seed") == lines[2].index("107")


def test_json_output_keeps_null_as_null(runner, seeded):
    result = runner.invoke(cli, ["sql", "SELECT seed, stop_reason FROM campaigns", "--db", str(seeded), "--json"])
    assert json.loads(result.output) == [{"seed": 107, "stop_reason": None}]


def test_two_formats_at_once_are_refused_not_one_silently_chosen(runner, seeded):
    result = runner.invoke(cli, ["sql", "SELECT seed FROM campaigns", "--db", str(seeded), "--json", "--csv"])
    assert result.exit_code == 2 and "--json and --csv cannot be combined" in result.output
    csv = runner.invoke(cli, ["sql", "SELECT seed FROM campaigns", "--db", str(seeded), "--csv"])
    assert csv.exit_code == 0 and csv.output.splitlines() == ["seed", "107"]


def test_the_statement_is_sent_as_written(runner, seeded):
    """A colon or a backslash inside a string literal is the literal's, not a parameter."""
    result = runner.invoke(cli, ["sql", "SELECT 'see :x' AS v, 'a\\:b' AS w", "--db", str(seeded), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [{"v": "see :x", "w": "a\\:b"}]


def test_json_output_is_strict_json_even_for_an_infinity(runner, seeded):
    result = runner.invoke(cli, ["sql", "SELECT 1e999 AS a, -1e999 AS b, 0.5 AS c", "--db", str(seeded), "--json"])
    assert json.loads(result.output, parse_constant=lambda name: pytest.fail(f"bare {name} in the JSON")) == [{"a": "inf", "b": "-inf", "c": 0.5}]


def test_a_stop_signal_ends_a_long_query_with_130(seeded):
    """The query runs in SQLite's C code; Ctrl-C still ends it, at once, and changes nothing."""
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    proc = subprocess.Popen([sys.executable, "-m", "campaign", "sql", endless, "--db", str(seeded)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Start-up takes well under a second of CPU; past that, the process is running the query.
        wait_for(lambda: _cpu_seconds(proc.pid) > 1.5, timeout=60)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:  # it never stops by itself
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 130, err
    assert "interrupted: the query was stopped" in err and "Traceback" not in err
    assert _count(seeded) == 1


def test_csv_output(runner, seeded):
    result = runner.invoke(cli, ["sql", "SELECT kind, seed FROM campaigns", "--db", str(seeded), "--csv"])
    assert list(csv.reader(io.StringIO(result.output))) == [["kind", "seed"], ["paired", "107"]]


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM campaigns",
        "UPDATE campaigns SET seed = 1",
        "INSERT INTO campaigns (kind) VALUES ('x')",
        "DROP TABLE campaigns",
        "CREATE TABLE evil (x)",
        "WITH t AS (SELECT 1) DELETE FROM campaigns",
    ],
)
def test_writes_are_refused_and_change_nothing(runner, seeded, statement):
    before = seeded.read_bytes()
    result = runner.invoke(cli, ["sql", statement, "--db", str(seeded)])
    assert result.exit_code == 2, result.output
    assert "read-only" in result.output
    assert _count(seeded) == 1
    with sqlite3.connect(seeded) as conn:
        assert conn.execute("SELECT seed FROM campaigns").fetchone()[0] == 107
        assert "evil" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert seeded.read_bytes() == before


@pytest.mark.parametrize("statement", ["SELECT 1; SELECT 2", "SELECT 1; DELETE FROM campaigns", "SELECT ?"])
def test_more_than_one_statement_is_bad_input_and_runs_nothing(runner, seeded, statement):
    before = seeded.read_bytes()
    result = runner.invoke(cli, ["sql", statement, "--db", str(seeded)])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "STATEMENT" in errors[0] and "nothing was run" in errors[0], result.output
    assert _count(seeded) == 1
    assert seeded.read_bytes() == before


def test_a_statement_that_is_not_utf8_is_bad_input(runner, seeded):
    # What Python makes of argv bytes that are not UTF-8: lone surrogates.
    statement = b"SELECT '\xff\xfe'".decode("utf-8", "surrogateescape")
    result = runner.invoke(cli, ["sql", statement, "--db", str(seeded)])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == "Error: STATEMENT: the statement is not UTF-8 text; nothing was run"
    assert "Traceback" not in result.output


def test_sql_error_is_one_clear_line(runner, seeded):
    result = runner.invoke(cli, ["sql", "SELECT * FROM no_such_table", "--db", str(seeded)])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: SQL error: no such table: no_such_table"


def test_missing_store_is_refused_and_not_created(runner, tmp_path):
    missing = tmp_path / "absent.db"
    result = runner.invoke(cli, ["sql", "SELECT 1", "--db", str(missing)])
    assert result.exit_code == 2
    assert "--db" in result.output
    assert not missing.exists()


def test_non_url_is_refused(runner):
    result = runner.invoke(cli, ["sql", "SELECT 1", "--db", "notadialect://host/db"])
    assert result.exit_code == 2
    assert "--db" in result.output


def _refused_as_read_only(result) -> str:
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert "read-only" in line and "disk I/O" not in line
    return line


@pytest.mark.parametrize(
    ("template", "needle"),
    [
        ("ATTACH DATABASE '{path}' AS x", "ATTACH"),
        ("ATTACH '{path}' AS x", "ATTACH"),
        ("VACUUM INTO '{path}'", "VACUUM INTO"),  # SQLite attaches the target to write it
    ],
)
def test_attach_is_refused_and_no_file_appears(runner, seeded, tmp_path, monkeypatch, template, needle):
    monkeypatch.chdir(tmp_path)
    before = seeded.read_bytes()
    listing = sorted(tmp_path.rglob("*"))
    for target in ("x.db", str(tmp_path / "abs.db")):
        line = _refused_as_read_only(runner.invoke(cli, ["sql", template.format(path=target), "--db", str(seeded)]))
        assert needle in line and f"opening another database file ({target!r}" in line
    assert sorted(tmp_path.rglob("*")) == listing
    assert seeded.read_bytes() == before and _count(seeded) == 1


@pytest.mark.parametrize(
    "statement",
    ["PRAGMA journal_mode=DELETE", "PRAGMA query_only=OFF", "PRAGMA main.user_version = 7", "PRAGMA foreign_keys=OFF", "DETACH DATABASE main"],
)
def test_pragma_writes_are_refused_as_read_only(runner, seeded, statement):
    before = seeded.read_bytes()
    line = _refused_as_read_only(runner.invoke(cli, ["sql", statement, "--db", str(seeded)]))
    assert "SQL console is read-only" in line
    assert seeded.read_bytes() == before
    with sqlite3.connect(seeded) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("statement", "expected"),
    [("PRAGMA journal_mode", "wal"), ("PRAGMA table_info(campaigns)", "kind"), ("SELECT name FROM pragma_table_info('campaigns')", "kind")],
)
def test_reading_pragmas_still_work(runner, seeded, statement, expected):
    result = runner.invoke(cli, ["sql", statement, "--db", str(seeded), "--csv"])
    assert result.exit_code == 0, result.output
    assert expected in result.output


def test_a_file_that_is_not_sqlite_is_one_line_naming_db(runner, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    result = runner.invoke(cli, ["sql", "SELECT 1", "--db", str(text)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # no traceback
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert "--db" in line and "not a SQLite database" in line
    assert text.read_text() == "not a database\n"


def _cpu_seconds(pid: int) -> float:
    """User plus system time the process has used so far (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
