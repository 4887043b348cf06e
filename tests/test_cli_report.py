"""`campaign report` and `campaign export`: latest or named campaign, clear refusals."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.samples import restore_store
from test_report_fixtures import full_attempt, insert_campaign, paired_trials

from campaign.cli import cli
from campaign.report import build_report, write_report
from campaign.report.integrity import NOT_CHECKED
from campaign.store import chain
from campaign.store.engine import make_engine, resolve_url


def _campaign(engine, **kwargs) -> int:
    return insert_campaign(engine, paired_trials(["a", "b"], 2, lambda t, r, v: full_attempt(verified_pass=v == "coding")), **kwargs)


def test_report_defaults_to_the_latest_campaign(engine, db_url, runner, tmp_path):
    _campaign(engine)
    latest = _campaign(engine)
    out = tmp_path / "r" / "report.json"
    result = runner.invoke(cli, ["report", "--output", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["campaign"]["id"] == latest
    assert report["schema_version"] == 3 and report["kind"] == "live_agentic_coding_paired"
    md = out.with_suffix(".md").read_text()
    assert "(report.svg)" in md
    assert out.with_suffix(".svg").read_text().startswith("<svg")
    assert f"campaign {latest}" in result.output


def test_report_on_an_explicit_campaign_is_regenerable(engine, db_url, runner, tmp_path):
    first = _campaign(engine)
    _campaign(engine)
    outs = [tmp_path / "one.json", tmp_path / "two.json"]
    for out in outs:
        result = runner.invoke(cli, ["report", str(first), "--output", str(out), "--db", db_url])
        assert result.exit_code == 0, result.output
    assert json.loads(outs[0].read_text())["campaign"]["id"] == first
    assert outs[0].read_text() == outs[1].read_text()
    assert outs[0].with_suffix(".md").read_text().replace("one.svg", "two.svg") == outs[1].with_suffix(".md").read_text()


def test_missing_campaign_is_a_usage_error(engine, db_url, runner, tmp_path):
    _campaign(engine)
    out = tmp_path / "r.json"
    result = runner.invoke(cli, ["report", "999", "--output", str(out), "--db", db_url])
    assert result.exit_code == 2
    assert "no campaign 999" in result.output
    assert not out.exists()


def test_empty_store_and_missing_store_are_usage_errors(engine, db_url, runner, tmp_path):
    result = runner.invoke(cli, ["report", "--output", str(tmp_path / "r.json"), "--db", db_url])
    assert result.exit_code == 2 and "no paired or multi-provider campaign yet" in result.output
    result = runner.invoke(cli, ["report", "--output", str(tmp_path / "r.json"), "--db", str(tmp_path / "nope.db")])
    assert result.exit_code == 2 and "--db" in result.output
    assert not (tmp_path / "nope.db").exists()


def test_output_must_be_a_json_file(engine, db_url, runner, tmp_path):
    _campaign(engine)
    result = runner.invoke(cli, ["report", "--output", str(tmp_path / "r.md"), "--db", db_url])
    assert result.exit_code == 2 and "--output" in result.output


def test_output_into_a_place_that_cannot_be_written_is_one_line_naming_it(engine, db_url, runner, tmp_path):
    _campaign(engine)
    (tmp_path / "plain").write_text("x")
    # /proc/self refuses new files even to root; a path under a regular file cannot exist.
    for output in ("/proc/self/report.json", str(tmp_path / "plain" / "report.json"), str(tmp_path / "plain" / "deeper" / "report.json")):
        result = runner.invoke(cli, ["report", "--output", output, "--db", db_url])
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output and "--output" in _one_error(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain", "store"]


def _one_error(result) -> str:
    assert isinstance(result.exception, SystemExit), result.exception
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def test_a_directory_where_a_written_file_goes_is_refused_before_anything_is_written(engine, db_url, runner, tmp_path):
    """Not only --output itself: the .md and .svg beside it, and export's three names."""
    cid = _campaign(engine)
    out, share = tmp_path / "out", tmp_path / "share"
    (out / "r.svg").mkdir(parents=True)
    (share / f"campaign-{cid}-live_agentic_coding_paired.md").mkdir(parents=True)
    for args, option in ((["report", "--output", str(out / "r.json")], "--output"), (["export", "--output-dir", str(share)], "--output-dir")):
        result = runner.invoke(cli, [*args, "--db", db_url])
        assert result.exit_code == 2, result.output
        assert f"{option}:" in _one_error(result) and "is not a file the report can replace" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["r.svg"]
    assert sorted(p.name for p in share.iterdir()) == [f"campaign-{cid}-live_agentic_coding_paired.md"]


def test_export_refuses_a_plan_only_campaign(engine, db_url, runner, tmp_path):
    planned = insert_campaign(
        engine, paired_trials(["a"], 1, lambda t, r, v: None), live=False, state="planned", approved_plan_digest=None
    )
    share = tmp_path / "share"
    result = runner.invoke(cli, ["export", str(planned), "--output-dir", str(share), "--db", db_url])
    assert result.exit_code == 2  # the wrong campaign named, as a nonpaired one is
    assert "CAMPAIGN_ID" in _one_error(result) and "plan-only" in result.output and "not a live result" in result.output
    assert not share.exists() or not any(share.iterdir())
    result = runner.invoke(cli, ["report", str(planned), "--output", str(tmp_path / "r.json"), "--db", db_url])
    assert result.exit_code == 2 and "plan-only" in result.output and not (tmp_path / "r.json").exists()


def test_a_stopped_live_campaign_with_no_attempts_is_still_reported(engine, db_url, runner, tmp_path):
    """Live but stopped before the first attempt: a real (empty) result, not a plan."""
    cid = insert_campaign(engine, paired_trials(["a"], 1, lambda t, r, v: None), live=True, state="stopped", stop_reason="run_deadline")
    result = runner.invoke(cli, ["export", str(cid), "--output-dir", str(tmp_path / "share"), "--db", db_url])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "share" / f"campaign-{cid}-live_agentic_coding_paired.json").read_text())
    assert report["completion"]["attempted"] == 0 and report["completion"]["not_attempted"] == 2
    assert report["campaign"]["stop_reason"] == "run_deadline"


def test_export_writes_the_sanitized_pair_under_fixed_names(engine, db_url, runner, tmp_path):
    cid = _campaign(engine, agent="offline", live=False, state="completed")
    share = tmp_path / "share"
    result = runner.invoke(cli, ["export", "--output-dir", str(share), "--db", db_url])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in share.iterdir())
    stem = f"campaign-{cid}-live_agentic_coding_paired"
    assert names == [f"{stem}.json", f"{stem}.md", f"{stem}.svg"]
    report = json.loads((share / f"{stem}.json").read_text())
    assert report["synthetic"] is True and report["evidence"] == "offline_unpaid"
    md = (share / f"{stem}.md").read_text()
    assert "Synthetic figures" in md and "No paid calls" in md
    assert "review" in result.output


def test_non_integer_campaign_id_is_a_usage_error(engine, db_url, runner, tmp_path):
    result = runner.invoke(cli, ["report", "latest", "--output", str(tmp_path / "r.json"), "--db", db_url])
    assert result.exit_code == 2


def test_a_nonpaired_run_is_not_reported_or_exported_as_a_paired_experiment(engine, db_url, runner, tmp_path):
    """The nonpaired lane runs one trial per task under one variant; it is a separate
    diagnostic lane and never a live_agentic_coding_paired result."""
    trials = [{"task": t, "repetition": 1, "variant": "default", "attempt": full_attempt()} for t in ("a", "b")]
    cid = insert_campaign(engine, trials, kind="nonpaired", experiment={"kind": "nonpaired", "agent": "claude-code", "model": "openai-codex:gpt-6.1-sol", "tasks": ["a", "b"]})
    out = tmp_path / "r.json"
    for args in (["report", str(cid), "--output", str(out)], ["export", str(cid), "--output-dir", str(tmp_path / "share")]):
        result = runner.invoke(cli, [*args, "--db", db_url])
        assert result.exit_code == 2, result.output
        assert "nonpaired" in result.output
    # Nor is it ever the default: with no paired campaign in the store there is nothing to report.
    result = runner.invoke(cli, ["report", "--output", str(out), "--db", db_url])
    assert result.exit_code == 2 and "no paired or multi-provider campaign" in result.output
    assert not out.exists() and not (tmp_path / "share").exists()


def test_the_default_report_skips_a_later_nonpaired_run(engine, db_url, runner, tmp_path):
    paired = insert_campaign(engine, paired_trials(["a"], 1, lambda t, r, v: full_attempt()), live=True, state="completed")
    insert_campaign(engine, [{"task": "a", "repetition": 1, "variant": "default", "attempt": full_attempt()}], kind="nonpaired", experiment={"kind": "nonpaired", "tasks": ["a"]})
    out = tmp_path / "r.json"
    result = runner.invoke(cli, ["report", "--output", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["campaign"]["id"] == paired


# --- a store whose hash chain fails (issue 14, item 3) ---------------------------------


def _tamper(db_path, campaign_id: int, seq: int = 2) -> None:
    """Edit a sealed row behind the engine's back, as ad-hoc SQL would."""
    import sqlite3

    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE attempts SET verified_pass = 1 - verified_pass WHERE campaign_id = ? AND seq = ?", (campaign_id, seq))


def _one_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_a_verified_report_says_so(engine, db_url, runner, tmp_path):
    cid = _campaign(engine)
    out = tmp_path / "r.json"
    result = runner.invoke(cli, ["report", str(cid), "--output", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    ends = report["integrity"].pop("chains")
    assert report["integrity"] == {"chain_verified": True, "chain_verified_reason": None, "problems": 0, "campaigns_verified": [cid]}
    assert "Unverified" not in out.with_suffix(".md").read_text()
    with engine.connect() as conn:
        last = chain.read_rows(conn, cid)[-1]
    assert ends == [{"campaign_id": cid, "links": last[chain.COLUMN["seq"]], "head": last[chain.COLUMN["row_hash"]], "final": True}]  # it completed


def test_report_and_export_refuse_a_tampered_store_in_one_line(engine, db_path, db_url, runner, tmp_path):
    cid = _campaign(engine)
    _tamper(db_path, cid)
    out, share = tmp_path / "r.json", tmp_path / "share"
    for args in (["report", str(cid), "--output", str(out)], ["export", str(cid), "--output-dir", str(share)], ["report", "--output", str(out)]):
        result = runner.invoke(cli, [*args, "--db", db_url])
        assert result.exit_code == 1, result.output
        line = _one_line(result)
        assert f"campaign {cid} seq 2" in line and "edited" in line
        assert "`campaign verify` shows all" in line and "--allow-unverified" in line
    assert not out.exists() and not out.with_suffix(".md").exists()
    assert not share.exists() or not any(share.iterdir())


def test_allow_unverified_publishes_a_report_marked_unverified(engine, db_path, db_url, runner, tmp_path):
    cid = _campaign(engine)
    _tamper(db_path, cid)
    out, share = tmp_path / "r.json", tmp_path / "share"
    result = runner.invoke(cli, ["report", str(cid), "--output", str(out), "--allow-unverified", "--db", db_url])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert [end["campaign_id"] for end in report["integrity"].pop("chains")] == [cid]  # what it was built from, verified or not
    assert report["integrity"] == {"chain_verified": False, "chain_verified_reason": None, "problems": 1, "campaigns_verified": [cid]}
    md = out.with_suffix(".md").read_text().splitlines()
    assert md[2].startswith("> **Unverified.** `campaign verify` finds 1 problem(s)") and "--allow-unverified" in md[2]
    result = runner.invoke(cli, ["export", str(cid), "--output-dir", str(share), "--allow-unverified", "--db", db_url])
    assert result.exit_code == 0, result.output
    shared = json.loads((share / f"campaign-{cid}-live_agentic_coding_paired.json").read_text())
    assert shared["integrity"]["chain_verified"] is False


def test_a_continuation_is_refused_when_a_campaign_it_continues_fails(engine, db_path, db_url, runner, tmp_path):
    """A continuation's spend includes the campaigns it continues, so their rows must verify too."""
    interrupted = {"status": "interrupted", "outcome": "interrupted", "verified_pass": None, "cost_usd": 0.2, "teardown_outcome": "clean"}
    trials = paired_trials(["a", "b"], 1, lambda t, r, v: None)
    trials[0].update(status="scheduled", earlier=[interrupted, interrupted])
    blocked = insert_campaign(engine, trials, state="stopped", stop_reason="finalization_failed")
    continued = _campaign(engine, continues=blocked)
    out = tmp_path / "r.json"
    result = runner.invoke(cli, ["report", str(continued), "--output", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["integrity"]["campaigns_verified"] == [continued, blocked] and report["integrity"]["chain_verified"] is True
    assert report["spend"]["measured_spend_usd"] == 8 * 0.25 + 0.4 and report["completion"]["interrupted_attempts"] == 2

    with __import__("sqlite3").connect(db_path) as conn:
        conn.execute("UPDATE attempts SET cost_usd = 0.0 WHERE campaign_id = ? AND seq = 1", (blocked,))
    result = runner.invoke(cli, ["report", str(continued), "--output", str(tmp_path / "again.json"), "--db", db_url])
    assert result.exit_code == 1
    assert f"campaign {blocked} seq 1" in _one_line(result)
    assert not (tmp_path / "again.json").exists()


# --- a store written before chain format 2 ------------------------------------------------

# The reports beside the store are what the engine wrote before chain format 2, except
# where a later change to the statistics changed them on purpose: the no-spread rule
# (task means all alike have no interval, and a simulated campaign without one detects
# nothing) rewrote report-2's success interval and two detectable effects; fields added
# since are null or counted in every report (wire_catalog_format, catalog_set_digests,
# catalog_sets; completion's attempted_without_result apart from not_attempted, and
# without_result_by_reason; spend.limits), and the headline interval (issue 43): ci_low
# and ci_high are now the t interval on task means, the spec's bootstrap moved beside it
# (bootstrap_percentile_95), with sign_flip_p and the interval and sign_flip headers;
# the detectable effects are simulated through the t interval. Nothing else. To re-pin after an intended
# change: `python tests/test_cli_report.py --repin`, then review the diff.
BEFORE = Path(__file__).parent / "samples" / "stores" / "chain-v1"


def _store_before(directory: Path) -> str:
    return restore_store(BEFORE / "store.sql", directory)


@pytest.fixture
def store_before(tmp_path) -> str:
    """The sample store as the engine wrote it before chain format 2 (a SQL dump of it):
    two providers, interrupted and unreached trials, a continuation carrying results, a
    row left running, floats below 1e-4, non-ASCII task and model names to redact."""
    return _store_before(tmp_path)


@pytest.mark.parametrize("campaign_id", [1, 2])
def test_the_report_of_a_store_written_before_chain_format_2_is_byte_for_byte_the_same(store_before, runner, tmp_path, campaign_id):
    out = tmp_path / f"report-{campaign_id}.json"
    result = runner.invoke(cli, ["report", str(campaign_id), "--output", str(out), "--db", store_before])
    assert result.exit_code == 0, result.output
    for suffix in (".json", ".md", ".svg"):
        assert out.with_suffix(suffix).read_bytes() == (BEFORE / f"report-{campaign_id}{suffix}").read_bytes(), suffix


@pytest.mark.parametrize(("campaign_id", "provider"), [(1, "alpha"), (2, "beta")])
def test_a_provider_report_of_a_store_written_before_chain_format_2_is_the_same(store_before, tmp_path, campaign_id, provider):
    name = f"report-{campaign_id}-{provider}"
    engine = make_engine(resolve_url(store_before))
    try:
        written = write_report(engine, campaign_id, tmp_path / f"{name}.json", provider=provider)
    finally:
        engine.dispose()
    for path in (written.json, written.markdown, written.svg):
        assert path.read_bytes() == (BEFORE / f"{name}{path.suffix}").read_bytes(), path.suffix


def test_rows_whose_chain_verified_are_reported_as_rows_checked_value_by_value_are(store_before):
    # A verified chain lets the report skip the number and boolean checks: same rows.
    engine = make_engine(resolve_url(store_before))
    try:
        verified = build_report(engine, 2)
        unchecked = build_report(engine, 2, integrity=NOT_CHECKED)
    finally:
        engine.dispose()
    assert verified["integrity"]["chain_verified"] is True
    assert verified["trials"] == unchecked["trials"] and verified["redaction"] == unchecked["redaction"]


def test_an_edited_row_is_checked_in_full_when_the_chain_check_fails(engine, db_path, db_url, tmp_path):
    """Only rows whose chain verified skip the number checks: text edited into a number
    column of a published unverified report is nulled and counted, never shown. Run as its
    own process, as an operator runs it (the aggregates then run in a forked child)."""
    import subprocess
    import sys

    cid = _campaign(engine)
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE attempts SET output_tokens = 'CANARY edited text', tool_calls = 2.5 WHERE campaign_id = ? AND seq = 2", (cid,))
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "campaign", "report", str(cid), "--output", str(out), "--allow-unverified", "--db", db_url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "CANARY" not in text
    report = json.loads(text)
    assert report["integrity"]["chain_verified"] is False
    edited = next(t for t in report["trials"] if t["attempt_seq"] == 2)
    assert edited["output_tokens"] is None and edited["tool_calls"] is None
    assert report["redaction"]["nulled_values"] == 2
    # The same report as this process builds it, in whichever way it runs the check.
    assert report["trials"] == build_report(engine, cid)["trials"]


def test_a_stop_signal_while_the_aggregates_run_apart_exits_130_and_writes_nothing(engine, db_url, tmp_path):
    """The signal lands in the report's process just after it forked the child counting the
    aggregates: exit 130 with its one line, no file written (the child is killed and reaped
    on the way out: ``test_store_snapshot``)."""
    import os
    import subprocess
    import sys

    cid = _campaign(engine)
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "campaign", "report", str(cid), "--output", str(out), "--db", db_url],
        capture_output=True, text=True, timeout=120, env={**os.environ, "CAMPAIGN_TEST_STOP_AT": "report:1:INT"},
    )  # fmt: skip
    assert done.returncode == 130, done.stderr
    assert done.stderr.startswith("interrupted: received SIGINT") and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert list(tmp_path.glob("r.*")) == []


if __name__ == "__main__" and sys.argv[1:] == ["--repin"]:
    # When a change to the report is intended: rewrite the reports beside the sample store
    # from this checkout, then review the diff (and say what changed in the comment above BEFORE).
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        db = _store_before(Path(tmp))
        engine = make_engine(resolve_url(db))
        try:
            for campaign_id, provider in ((1, None), (2, None), (1, "alpha"), (2, "beta")):
                name = f"report-{campaign_id}" + (f"-{provider}" if provider else "")
                written = write_report(engine, campaign_id, Path(tmp) / f"{name}.json", provider=provider)
                for path in (written.json, written.markdown, written.svg):
                    (BEFORE / path.name).write_bytes(path.read_bytes())
        finally:
            engine.dispose()
    print(f"re-pinned the reports in {BEFORE}")
