"""`campaign coding --campaign --max-spend-usd --attempt-ceiling-usd`: a local cap per provider."""

from __future__ import annotations

import json
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from workspace import run

TASKS = "semver-precedence,invoice-rounding"


def base(out: Path, *extra: str) -> list[str]:
    # Through the recording proxy: under a cap, an attempt whose spend no flush proves
    # stops its provider (test_an_unproven_spend_stops_its_provider_under_a_cap).
    return ["coding", "--campaign", "--tasks", TASKS, "--repetitions", "1", "--agent", "offline-wire", "--output-dir", str(out), *extra]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--max-spend-usd", "1"], "--attempt-ceiling-usd"),
        (["--max-total-spend-usd", "1"], "--attempt-ceiling-usd"),
        (["--attempt-ceiling-usd", "1"], "--max-spend-usd"),
        (["--max-total-spend-usd", "1", "--attempt-ceiling-usd", "2"], "--attempt-ceiling-usd: must not exceed --max-total-spend-usd"),
        (["--parallel-providers", "0"], "--parallel-providers: must be between 1 and 64"),
        (["--max-spend-usd", "0", "--attempt-ceiling-usd", "0"], "--max-spend-usd: must be a positive number of US dollars"),
        (["--max-spend-usd", "five", "--attempt-ceiling-usd", "1"], "--max-spend-usd: must be a positive number"),
        (["--max-spend-usd", "nan", "--attempt-ceiling-usd", "1"], "--max-spend-usd: must be a positive number"),
        (["--max-spend-usd", "1", "--attempt-ceiling-usd", "2"], "--attempt-ceiling-usd: must not exceed --max-spend-usd"),
        # Decimal would read these as 10, 100 and 5: a typo of 1.0 must not become a cap ten times higher.
        (["--max-total-spend-usd", "1_0", "--attempt-ceiling-usd", "1"], "--max-total-spend-usd: must be a positive number of US dollars in digits"),
        (["--max-total-spend-usd", "1e2", "--attempt-ceiling-usd", "1"], "--max-total-spend-usd: must be a positive number of US dollars in digits"),
        (["--max-total-spend-usd", "\u0665", "--attempt-ceiling-usd", "1"], "--max-total-spend-usd: must be a positive number of US dollars in digits"),
        # What the store could not read back would be shown as no cap at all.
        (["--max-total-spend-usd", "10000000000000", "--attempt-ceiling-usd", "1"], "--max-total-spend-usd: must be under 10^12 US dollars"),
        (["--max-total-spend-usd", "1", "--attempt-ceiling-usd", "0.0000000000001"], "--attempt-ceiling-usd: must be under 10^12 US dollars with at most 12 decimal places"),
        (["--continue-blocked"], "--continue-blocked"),
    ],
)
def test_bad_limits_are_refused_before_anything_is_written(tmp_path, extra, needle):
    out = tmp_path / "out"
    result = run(base(out, "--live", *extra))
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and needle in errors[0], result.output
    assert not out.exists()


def test_limits_belong_to_the_campaign_lane(tmp_path):
    result = run(["coding", "--output", str(tmp_path / "r.json"), "--max-spend-usd", "1", "--attempt-ceiling-usd", "1"])
    assert result.exit_code == 2 and "--max-spend-usd" in result.output and "only apply with --campaign" in result.output
    assert list(tmp_path.iterdir()) == []


def test_continue_blocked_without_a_blocked_campaign_resumes_it_and_starts_no_other(tmp_path):
    # Continuing the experiment is what was asked; a campaign that is not blocked needs no new one.
    out = tmp_path / "out"
    assert run(base(out, "--live")).exit_code == 0
    before = sqlite3.connect(out / "campaign.db").execute("SELECT count(*), max(id) FROM campaigns").fetchall()
    result = run(base(out, "--live", "--resume", "--continue-blocked"))
    assert result.exit_code == 0 and "ran 0 attempts now" in result.output, result.output
    assert sqlite3.connect(out / "campaign.db").execute("SELECT count(*), max(id) FROM campaigns").fetchall() == before


def ceiling_held(statuses: list[tuple]) -> int:
    """How many trials a ceiling below one attempt's cost holds back: the other three, and
    the first one too when the wire's spend watch stopped its attempt before it ended
    (which of the two comes first is a race between the watch's poll and the client's
    end, decided by the machine's load; each is the ceiling held)."""
    stopped = ("not_attempted", "attempt_exceeded_ceiling")
    assert statuses[0] in (("finished", None), stopped) and all(s == stopped for s in statuses[1:]), statuses
    return 4 if statuses[0] == stopped else 3


def test_a_ceiling_below_an_attempts_cost_stops_only_that_provider_with_exact_sums(tmp_path):
    out = tmp_path / "out"
    # The offline agent's synthetic costs are a few cents per attempt: a 1-cent ceiling
    # lets the first attempt start (0 + 0.01 <= 1) and its cost then exceeds the ceiling.
    result = run(base(out, "--live", "--max-spend-usd", "1", "--attempt-ceiling-usd", "0.01"))
    # Trials are left without a result: the run says why and exits 3, not 0.
    assert result.exit_code == 3, result.output
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute("SELECT state, stop_reason FROM campaigns").fetchall() == [("stopped", "attempt_exceeded_ceiling")]
        statuses = conn.execute("SELECT status, not_attempted_reason FROM trials ORDER BY position").fetchall()
        costs = [Decimal(str(c)) for (c,) in conn.execute("SELECT cost_usd FROM attempts ORDER BY seq")]
        limits = json.loads(conn.execute("SELECT spend_limits_json FROM campaigns").fetchone()[0])
    held = ceiling_held(statuses)
    assert f"unfinished: not attempted: {held} attempt_exceeded_ceiling" in result.output, result.output
    assert "run again on --resume only under a raised --attempt-ceiling-usd" in result.output
    assert limits == {"provider_max_spend_usd": "1", "per_attempt_ceiling_usd": "0.01"}
    # The report records the caps the run was held to.
    report = json.loads((out / "report.json").read_text())
    assert report["spend"]["limits"] == {"max_spend_usd": None, "provider_max_spend_usd": 1.0, "per_attempt_ceiling_usd": 0.01}
    assert "The run was held to local caps: each provider 1 USD, each attempt 0.01 USD." in (out / "report.md").read_text()
    assert f"spend offline: {format(sum(costs).normalize(), 'f')} of 1 USD" in result.output and "counted as measured" in result.output


def test_an_unproven_spend_stops_its_provider_under_a_cap(tmp_path):
    """Issue 42 item 2: the offline agent off the wire reports its cost, but no profiler
    flush proves it, so its spend is incomplete and a cap stops its provider after it."""
    out = tmp_path / "out"
    args = base(out, "--live", "--max-spend-usd", "5", "--attempt-ceiling-usd", "1")
    result = run([a for a in args if a not in ("--agent", "offline-wire")])
    assert result.exit_code == 3, result.output
    assert "spend incomplete: no completed profiler flush" in result.output
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute("SELECT spend_complete, flush_complete FROM attempts").fetchall() == [(0, None)]
        assert conn.execute("SELECT count(*) FROM trials WHERE not_attempted_reason = 'spend_incomplete'").fetchone()[0] == 3


def test_the_cap_admits_exactly_what_fits(tmp_path):
    out = tmp_path / "out"
    cap, ceiling = Decimal("0.05"), Decimal("0.03")  # each attempt costs about $0.01
    result = run(base(out, "--live", "--max-spend-usd", str(cap), "--attempt-ceiling-usd", str(ceiling)))
    assert result.exit_code == 3, result.output
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute("SELECT stop_reason FROM campaigns").fetchall() == [("spend_limit",)]
        costs = [Decimal(str(c)) for (c,) in conn.execute("SELECT cost_usd FROM attempts ORDER BY seq")]
        skipped = conn.execute("SELECT count(*) FROM trials WHERE not_attempted_reason = 'spend_limit'").fetchone()[0]
    # Every attempt started with room for a whole ceiling; the next one would not have had it.
    assert all(sum(costs[:i]) + ceiling <= cap for i in range(len(costs)))
    assert sum(costs) + ceiling > cap and skipped == 4 - len(costs) >= 1


def test_a_stopped_campaign_keeps_its_reason_until_work_continues(tmp_path):
    out = tmp_path / "out"
    capped = base(out, "--live", "--resume", "--max-spend-usd", "0.1", "--attempt-ceiling-usd", "0.09")
    assert run(capped).exit_code == 3
    with sqlite3.connect(out / "campaign.db") as conn:
        first = conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
    # The same cap again: nothing fits, nothing runs, and the stop and its reason stand.
    again = run(capped)
    assert again.exit_code == 3 and "to continue:" in again.output, again.output
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute("SELECT state, stop_reason FROM campaigns").fetchall() == [("stopped", "spend_limit")]
        assert conn.execute("SELECT count(*) FROM attempts").fetchone()[0] == first
    # A cap with room: the trials the cap held back run, and the campaign completes.
    done = run(base(out, "--live", "--resume", "--max-spend-usd", "5", "--attempt-ceiling-usd", "0.09"))
    assert done.exit_code == 0, done.output
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute("SELECT state, stop_reason FROM campaigns").fetchall() == [("completed", None)]
        assert conn.execute("SELECT count(*) FROM trials WHERE status != 'finished'").fetchone()[0] == 0


def test_trials_a_ceiling_held_back_run_again_only_under_a_raised_ceiling(tmp_path):
    out = tmp_path / "out"
    capped = base(out, "--live", "--resume", "--max-spend-usd", "1", "--attempt-ceiling-usd", "0.01")
    assert run(capped).exit_code == 3
    held = "SELECT count(*) FROM trials WHERE not_attempted_reason = 'attempt_exceeded_ceiling'"
    with sqlite3.connect(out / "campaign.db") as conn:
        count = ceiling_held(conn.execute("SELECT status, not_attempted_reason FROM trials ORDER BY position").fetchall())
        largest = max(Decimal(str(c)) for (c,) in conn.execute("SELECT cost_usd FROM attempts"))
    # The same ceiling: the same attempt would be stopped at the same place; nothing runs.
    again = run(capped)
    assert again.exit_code == 3 and "only under a raised --attempt-ceiling-usd" in again.output, again.output
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute(held).fetchone()[0] == count and conn.execute("SELECT count(*) FROM attempts").fetchone()[0] == 1
    # Raised, but not above what the attempt spent: still held back.
    assert run(base(out, "--live", "--resume", "--max-spend-usd", "1", "--attempt-ceiling-usd", format(largest, "f"))).exit_code == 3
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute(held).fetchone()[0] == count
    # Without --live, the preview counts them only under a ceiling that would reopen them.
    for ceiling, settled in (("0.01", 4), ("0.5", 4 - count)):
        preview = run(base(out, "--resume", "--max-spend-usd", "1", "--attempt-ceiling-usd", ceiling))
        assert preview.exit_code == 0 and f"{settled} of its 4 trials are settled" in preview.output, preview.output
    # Above it: the held-back trials run, and the campaign completes.
    done = run(base(out, "--live", "--resume", "--max-spend-usd", "1", "--attempt-ceiling-usd", "0.5"))
    assert done.exit_code == 0, done.output
    with sqlite3.connect(out / "campaign.db") as conn:
        assert conn.execute("SELECT state, stop_reason FROM campaigns").fetchall() == [("completed", None)]
        assert conn.execute("SELECT count(*) FROM trials WHERE status != 'finished'").fetchone()[0] == 0
