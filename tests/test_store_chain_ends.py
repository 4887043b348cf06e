"""Where a chain ended when a report read it, and `campaign verify --against`.

A chain cut off at its end still links up, and whoever runs this code can reseal an
edited one; only something kept outside the store can tell. A real campaign (the CLI,
offline agent) publishes its report; copies of its store are then cut or resealed the
way a hand in the store would, and checked against that report."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from campaign.cli import cli
from campaign.report import write_report
from campaign.store import chain, repository
from campaign.store.engine import make_engine, resolve_url

TASKS = "semver-precedence,invoice-rounding"
LINKS = 8  # 2 tasks x 2 repetitions x 2 variants


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """A finished campaign's output directory: its store and the report it published."""
    tmp = tmp_path_factory.mktemp("ends")
    done = subprocess.run(
        [sys.executable, "-m", "campaign", "coding", "--campaign", "--tasks", TASKS, "--providers", "offline", "--repetitions", "2", "--live",
         "--output-dir", str(tmp / "out")],
        capture_output=True, text=True, timeout=600, cwd=tmp,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return tmp / "out"


@pytest.fixture
def store(published, tmp_path) -> Path:
    copy = tmp_path / "store.db"
    shutil.copy(published / "campaign.db", copy)
    return copy


@pytest.fixture
def report(published) -> Path:
    return published / "report.json"


def _sql(db: Path, *statements: str) -> None:
    with sqlite3.connect(db) as conn:
        for statement in statements:
            conn.execute(statement)


def _last_link(db: Path) -> tuple[int, str]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT seq, row_hash FROM attempts WHERE campaign_id = 1 ORDER BY seq DESC LIMIT 1").fetchone()


def _cut(db: Path, keep: int) -> None:
    """Rows removed from the chain's end, their trials set back to not attempted: what
    a shorter run would have left, and the chain still links up."""
    _sql(
        db,
        f"UPDATE trials SET status = 'not_attempted', not_attempted_reason = 'not_reached' WHERE id IN (SELECT trial_pk FROM attempts WHERE seq > {keep})",
        f"DELETE FROM attempts WHERE seq > {keep}",
    )


def _verify(runner, db: Path, *args: str):
    return runner.invoke(cli, ["verify", *args, "--db", str(db)])


def test_a_report_publishes_where_the_chain_it_read_ended(store, report):
    seq, row_hash = _last_link(store)
    assert seq == LINKS
    assert json.loads(report.read_text())["integrity"]["chains"] == [{"campaign_id": 1, "links": LINKS, "head": row_hash, "final": True}]  # it completed
    assert f"| chain end, campaign 1 | link `{LINKS}`, head `{row_hash}`, final |" in report.with_suffix(".md").read_text()


def test_the_store_a_report_was_built_from_holds_its_chains(runner, store, report):
    result = _verify(runner, store, "--against", str(report))
    assert result.exit_code == 0, result.output
    assert result.output == f"chain intact: {LINKS} rows\nholds the chains {report} was built from: campaign 1 to link {LINKS}\n"


def test_a_chain_cut_off_at_its_end_verifies_alone_and_is_named_against_its_report(runner, store, report):
    _cut(store, LINKS - 2)
    alone = _verify(runner, store)
    assert alone.exit_code == 0 and alone.output == f"chain intact: {LINKS - 2} rows\n"  # why reports publish their ends
    result = _verify(runner, store, "--against", str(report))
    assert result.exit_code == 1
    assert f"campaign 1 seq {LINKS}: missing: the report published {LINKS} links and the store's chain has {LINKS - 2}" in result.output
    assert "chain intact" not in result.output


def test_a_row_edited_and_the_chain_resealed_is_named_against_its_report(runner, store, report):
    _sql(store, "UPDATE attempts SET verified_pass = 1 - verified_pass, outcome = 'edited' WHERE seq = 3", "UPDATE attempts SET row_hash = NULL, prev_hash = NULL WHERE seq >= 3")
    engine = make_engine(resolve_url(str(store)))
    try:
        assert chain.seal_pending(engine, 1) == LINKS - 2  # anyone with this code can
    finally:
        engine.dispose()
    assert _verify(runner, store).exit_code == 0
    result = _verify(runner, store, "--against", str(report))
    assert result.exit_code == 1
    with sqlite3.connect(store) as conn:
        (last_id,) = conn.execute(f"SELECT id FROM attempts WHERE seq = {LINKS}").fetchone()
    named = [line for line in result.output.splitlines() if line.startswith("campaign 1 ")]
    assert len(named) == 1 and named[0].startswith(f"campaign 1 seq {LINKS} (attempt {last_id}): edited: its row_hash is not the head the report published")
    assert "resealed" in named[0]


def _report(db: Path, campaign_id: int, out: Path) -> Path:
    engine = make_engine(resolve_url(str(db)))
    try:
        return write_report(engine, campaign_id, out).json
    finally:
        engine.dispose()


@pytest.mark.parametrize("state", ["interrupted", "completed"])
def test_a_chain_may_grow_past_a_published_end_only_if_it_was_not_final(runner, store, tmp_path, state):
    """A report written when the campaign was interrupted holds for the store its resume
    grew; one written when it had completed does not: nothing runs after that."""
    shorter = tmp_path / "shorter.db"
    shutil.copy(store, shorter)
    _cut(shorter, LINKS - 3)
    _sql(shorter, f"UPDATE campaigns SET state = '{state}'")
    earlier = _report(shorter, 1, tmp_path / "earlier" / "report.json")
    (end,) = json.loads(earlier.read_text())["integrity"]["chains"]
    assert (end["links"], end["final"]) == (LINKS - 3, state == "completed")
    result = _verify(runner, store, "--against", str(earlier))
    if state == "interrupted":
        assert result.exit_code == 0, result.output
        assert f"campaign 1 to link {LINKS - 3}" in result.output
    else:
        assert result.exit_code == 1
        assert f"campaign 1 seq {LINKS - 3}: edited: 3 attempt rows past the end of a chain the report published as final" in result.output


def test_a_second_verdict_resealed_onto_a_completed_chain_is_named(runner, store, report):
    """The failing last attempt copied as a pass, resealed onto the chain's end: the chain
    links up and the published end is still there, but the trial now has two verdicts."""
    columns = [row[1] for row in sqlite3.connect(store).execute("PRAGMA table_info(attempts)") if row[1] not in ("id", "seq", "row_hash", "prev_hash")]
    copied = ", ".join("'passed'" if c == "outcome" else "1 - verified_pass" if c == "verified_pass" else c for c in columns)
    _sql(store, f"INSERT INTO attempts ({', '.join(columns)}, seq) SELECT {copied}, {LINKS + 1} FROM attempts WHERE seq = {LINKS}")
    engine = make_engine(resolve_url(str(store)))
    try:
        assert chain.seal_pending(engine, 1) == 1
    finally:
        engine.dispose()
    alone = _verify(runner, store)
    assert alone.exit_code == 1 and f"campaign 1 seq {LINKS + 1}" in alone.output and "an attempt that ended after its trial's verdict" in alone.output
    against = _verify(runner, store, "--against", str(report))
    assert against.exit_code == 1 and "1 attempt rows past the end of a chain the report published as final" in against.output


def _continuation(db: Path) -> int:
    engine = make_engine(resolve_url(str(db)))
    try:
        return repository.create_continuation(engine, 1, repository.carryable_trials(engine, 1))
    finally:
        engine.dispose()


def test_a_continuation_publishes_every_chain_of_its_lineage_an_empty_one_by_its_genesis(runner, store, tmp_path):
    continued = _continuation(store)
    written = _report(store, continued, tmp_path / "continued" / "report.json")
    with sqlite3.connect(store) as conn:
        (digest,) = conn.execute("SELECT experiment_digest FROM campaigns WHERE id = ?", (continued,)).fetchone()
    published = json.loads(written.read_text())["integrity"]["chains"]
    assert published == [
        {"campaign_id": continued, "links": 0, "head": digest, "final": False},  # it runs on
        {"campaign_id": 1, "links": LINKS, "head": _last_link(store)[1], "final": True},  # it is continued
    ]
    assert _verify(runner, store, "--against", str(written)).exit_code == 0
    _sql(store, f"UPDATE campaigns SET experiment_digest = '{'0' * 64}' WHERE id = {continued}")
    result = _verify(runner, store, "--against", str(written))
    assert result.exit_code == 1
    assert f"campaign {continued}: edited: the campaign's experiment digest is not the one the report published" in result.output


def test_a_continuation_unlinked_from_the_campaign_it_continues_is_named_against_its_report(runner, store, tmp_path):
    """Its carried results set back and its link removed, it reads as a campaign of its
    own (legitimately possible: the same experiment run twice); its report knows better."""
    continued = _continuation(store)
    written = _report(store, continued, tmp_path / "continued" / "report.json")
    _sql(
        store,
        f"UPDATE trials SET carried_from_trial_pk = NULL, status = 'not_attempted', not_attempted_reason = 'stopped' WHERE campaign_id = {continued}",
        f"UPDATE campaigns SET continues_campaign_id = NULL WHERE id = {continued}",
    )
    assert _verify(runner, store).exit_code == 0
    result = _verify(runner, store, "--against", str(written))
    assert result.exit_code == 1
    assert f"campaign {continued}: edited: the campaign continues none, and the report was built from [1] (continues_campaign_id was edited)" in result.output


def test_against_a_report_verifies_every_campaign_it_read_not_only_the_one_named(runner, store, tmp_path):
    continued = _continuation(store)
    written = _report(store, continued, tmp_path / "continued" / "report.json")
    _sql(store, "UPDATE attempts SET verified_pass = 1 - verified_pass WHERE campaign_id = 1 AND seq = 2")
    assert _verify(runner, store, str(continued)).exit_code == 0  # its own rows are untouched
    result = _verify(runner, store, str(continued), "--against", str(written))
    assert result.exit_code == 1
    assert "campaign 1 seq 2" in result.output and "edited" in result.output


def test_another_store_does_not_hold_the_reports_chains(runner, report, tmp_path):
    other = tmp_path / "other.db"
    assert runner.invoke(cli, ["db", "upgrade", "--db", str(other)]).exit_code == 0
    result = _verify(runner, other, "--against", str(report))
    assert result.exit_code == 1
    assert "campaign 1: missing: the report's campaign is not in this store" in result.output


def _report_with(report: Path, tmp_path: Path, chains) -> Path:
    data = json.loads(report.read_text())
    if chains is ...:
        del data["integrity"]["chains"]
    else:
        data["integrity"]["chains"] = chains
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    return edited


GOOD = {"campaign_id": 1, "links": LINKS, "head": "a" * 64, "final": True}


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda report, tmp: tmp / "missing.json", "does not exist"),
        (lambda report, tmp: tmp, "is a directory"),
        (lambda report, tmp: (tmp / "text.json", (tmp / "text.json").write_text("not json"))[0], "is not JSON"),
        (lambda report, tmp: (tmp / "list.json", (tmp / "list.json").write_text("[]"))[0], "publishes no chain ends"),
        (lambda report, tmp: _report_with(report, tmp, ...), "publishes no chain ends"),
        (lambda report, tmp: _report_with(report, tmp, []), "publishes no chain ends"),
        (lambda report, tmp: _report_with(report, tmp, [{**GOOD, "head": "A" * 64}]), "integrity.chains[0] is not a chain end"),
        (lambda report, tmp: _report_with(report, tmp, [GOOD, {**GOOD, "head": "a" * 63}]), "integrity.chains[1] is not a chain end"),
        (lambda report, tmp: _report_with(report, tmp, [{**GOOD, "links": -1}]), "integrity.chains[0] is not a chain end"),
        (lambda report, tmp: _report_with(report, tmp, [{**GOOD, "links": True}]), "integrity.chains[0] is not a chain end"),
        (lambda report, tmp: _report_with(report, tmp, [{**GOOD, "campaign_id": "1"}]), "integrity.chains[0] is not a chain end"),
        (lambda report, tmp: _report_with(report, tmp, ["campaign 1"]), "integrity.chains[0] is not a chain end"),
        (lambda report, tmp: _report_with(report, tmp, [{**GOOD, "links": 2**63}]), "integrity.chains[0] is not a chain end"),
        (lambda report, tmp: _report_with(report, tmp, [{**GOOD, "final": None}]), "integrity.chains[0] is not a chain end"),
        (lambda report, tmp: _report_with(report, tmp, [GOOD, {**GOOD, "head": "b" * 64}]), "names a campaign twice"),
        (lambda report, tmp: _report_with(report, tmp, [{**GOOD, "campaign_id": i} for i in range(1, 66)]), "has 65 entries and a report publishes at most 64"),
        (lambda report, tmp: (tmp / "fifo.json", os.mkfifo(tmp / "fifo.json"))[0], "is a FIFO (named pipe), not a file"),  # no writer: reading it would wait forever
        (lambda report, tmp: Path("/dev/zero"), "is a character device, not a file"),
    ],
)
def test_a_report_that_is_not_one_is_refused_in_one_line_before_the_store_is_opened(runner, report, tmp_path, make, words):
    against = make(report, tmp_path)
    absent = tmp_path / "absent.db"
    result = _verify(runner, absent, "--against", str(against))
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "--against" in error[0] and words in error[0], result.output
    assert not absent.exists()
