"""`campaign coding --task-suite DIR`: paired campaigns on your own tasks (engine format and
Harbor), the suite bound into the experiment, named in progress and report, a
changed task refused on --resume by its name, and tasks no attempt can run refused."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from campaign.cli import cli
from workspace import run

SUITES = Path(__file__).parent / "suites"
SHA256 = 64


def campaign(out: Path, suite: Path, *extra: str) -> list[str]:
    return ["coding", "--campaign", "--providers", "offline", "--task-suite", str(suite), "--repetitions", "1", "--output-dir", str(out), *extra]


def attempts(out: Path) -> list[tuple]:
    with sqlite3.connect(out / "campaign.db") as conn:
        return conn.execute("SELECT t.task, t.variant, a.outcome, a.failure_class, a.row_hash FROM attempts a JOIN trials t ON t.id = a.trial_pk ORDER BY a.id").fetchall()


@pytest.mark.parametrize(("suite", "tasks"), [("engine-example", 4), ("harbor-example", 3)])
def test_a_paired_campaign_runs_every_task_of_the_suite_end_to_end(tmp_path, suite, tasks):
    out = tmp_path / "out"
    result = run(campaign(out, SUITES / suite, "--live"))
    assert result.exit_code == 0, result.output
    assert f"tasks: task suite {suite} ({tasks} of its {tasks} tasks)" in result.output
    assert "were never checked as they are now" in result.output, "a run on unchecked tasks says so"
    rows = attempts(out)
    assert len(rows) == 2 * tasks and {r[0] for r in rows} == {t.name for t in (SUITES / suite).iterdir() if t.is_dir()}
    # The offline agent applied the reference solution or left the fixture: either way a verdict,
    # never a verifier that could not start.
    assert {r[2] for r in rows} <= {"passed", "failed"} and "verifier_error" not in {r[3] for r in rows}
    assert "passed" in {r[2] for r in rows}
    report = json.loads((out / "report.json").read_text())
    bound = report["experiment"]["task_suite"]
    assert bound["name"] == suite and len(bound["digest"]) == SHA256
    assert sorted(bound["unchecked_tasks"]) == sorted({r[0] for r in rows})
    shared = (out / "report.json").read_text() + (out / "report.md").read_text()
    assert str(SUITES) not in shared and "tests/suites" not in shared, "a suite's path never reaches the report"
    markdown = (out / "report.md").read_text()
    assert f"| task suite | `{suite}` |" in markdown and "never proven sound" in markdown


def test_a_checked_suite_runs_without_the_warning(tmp_path, runner):
    suite = SUITES / "engine-example"
    assert runner.invoke(cli, ["tasks", "check", "--task-suite", str(suite), "--tasks", "py-wordcount", "--runs", "2"]).exit_code == 0
    out = tmp_path / "out"
    result = run(campaign(out, suite, "--tasks", "py-wordcount", "--live"))
    assert result.exit_code == 0, result.output
    assert "never checked" not in result.output
    assert json.loads((out / "report.json").read_text())["experiment"]["task_suite"]["unchecked_tasks"] == []


def test_changing_one_byte_of_a_verifier_makes_resume_refuse_naming_the_task(tmp_path):
    suite = Path(shutil.copytree(SUITES / "engine-example", tmp_path / "engine-example"))
    out = tmp_path / "out"
    first = run(campaign(out, suite, "--tasks", "node-slugify,sh-csv-total", "--live"))
    assert first.exit_code == 0, first.output
    before = attempts(out)
    verifier = suite / "sh-csv-total" / "verifier" / "run_tests.sh"
    verifier.write_bytes(verifier.read_bytes().replace(b"#", b" ", 1))
    again = run(campaign(out, suite, "--tasks", "node-slugify,sh-csv-total", "--live", "--resume"))
    assert again.exit_code == 2, again.output
    (line,) = [x for x in again.output.splitlines() if x.startswith("Error:")]
    assert "--resume" in line and "task_suite.tasks[sh-csv-total]" in line and "node-slugify" not in line
    assert "tasks: task suite" not in again.output, "a refused run says nothing else"
    assert attempts(out) == before


def test_resume_with_the_suite_unchanged_redoes_nothing(tmp_path):
    out = tmp_path / "out"
    args = campaign(out, SUITES / "harbor-example", "--tasks", "shell-inventory", "--live")
    assert run(args).exit_code == 0
    before = attempts(out)
    again = run([*args, "--resume"])
    assert again.exit_code == 0, again.output
    assert "ran 0 attempts now" in again.output and attempts(out) == before


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        # A campaign builds it (nothing pulled: its FROM is not on this machine), or says no runtime is here.
        (["--task-suite", str(SUITES / "unsound"), "--tasks", "harbor-needs-image"], "harbor-needs-image"),
        (["--task-suite", str(SUITES / "engine-example"), "--tasks", "semver-precedence"], "unknown task 'semver-precedence' in task suite engine-example"),
        (["--task-suite", str(SUITES / "nowhere")], "--task-suite"),
    ],
)
def test_a_task_that_cannot_run_is_refused_and_nothing_is_written(tmp_path, monkeypatch, extra, needle):
    monkeypatch.chdir(tmp_path)
    result = run(["coding", "--campaign", "--providers", "offline", "--repetitions", "1", "--live", "--output-dir", "X", *extra])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert needle in line
    assert list(tmp_path.iterdir()) == []


def test_a_nonpaired_run_takes_the_suite_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "nonpaired.db"
    result = run(["coding", "--db", str(db), "--output", str(tmp_path / "result.json"), "--task-suite", str(SUITES / "engine-example"), "--tasks", "node-slugify"])
    assert result.exit_code == 0, result.output
    assert "tasks: task suite engine-example (1 of its 4 tasks)" in result.output
    with sqlite3.connect(db) as conn:
        (experiment,) = conn.execute("SELECT experiment_json FROM campaigns").fetchone()
    assert json.loads(experiment)["task_suite"]["name"] == "engine-example"


def test_a_verifier_that_cannot_start_is_the_machines_fault_and_stops_the_run(tmp_path):
    out = tmp_path / "out"
    result = run(campaign(out, SUITES / "unsound", "--tasks", "missing-tool", "--live"))
    assert result.exit_code == 3, result.output
    assert "the verifier could not start: campaign-no-such-interpreter not found" in result.output
    ((task, _, outcome, failure_class, _),) = attempts(out)
    assert (task, outcome, failure_class) == ("missing-tool", "engine_error", "verifier_error")
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute("SELECT verified_pass FROM attempts").fetchall() == [(None,)], "no verdict: never the agent's failure"
