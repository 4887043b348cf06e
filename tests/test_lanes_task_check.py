"""`campaign tasks check`'s judgement: one reason per unsound task, from what the verifier
itself said over its runs (the runs themselves are real attempts: tests/test_cli_tasks.py)."""

from __future__ import annotations

import pytest

from campaign.agents.record import unknown_record
from campaign.lanes.attempt_plan import AttemptOutcome, Verdict
from campaign.lanes.task_check import judge
from campaign.vocabulary import TASK_CHECK_REASONS


def ran(exit_code: int | None, *, reward: bool | None = None, timed_out: bool = False, could_not_start: bool = False, outcome: str = "failed") -> AttemptOutcome:
    return AttemptOutcome(
        attempt_id=1, outcome=outcome, failure_class=None, verified_pass=None, wall_seconds=None, record=unknown_record(None),
        spend_complete=True, cleanup_complete=True, disposal_complete=True, finalization_failed=False,
        verifier=Verdict(exit_code, reward, timed_out, could_not_start),
    )  # fmt: skip


FAIL, PASS = ran(1), ran(0)


@pytest.mark.parametrize(
    ("fixture", "solution", "reason"),
    [
        ([FAIL] * 3, [PASS] * 3, None),
        ([PASS] * 3, [PASS] * 3, "fixture_passes"),
        ([FAIL] * 3, [FAIL] * 3, "solution_fails"),
        ([FAIL] * 3, [PASS, FAIL, PASS], "verifier_flaky"),
        ([FAIL, PASS, FAIL], [PASS] * 3, "verifier_flaky"),
        ([FAIL] * 3, [PASS, ran(None, could_not_start=True), PASS], "verifier_error"),
        ([FAIL] * 3, [ran(127)] * 3, "verifier_error"),
        ([FAIL] * 3, [PASS, ran(None, timed_out=True), PASS], "verifier_timeout"),
        ([FAIL] * 3, [PASS, ran(None, outcome="engine_error"), PASS], "engine_error"),
        # A Harbor reward file decides over the exit code, both ways.
        ([ran(0, reward=False)] * 3, [ran(1, reward=True)] * 3, None),
        ([ran(1, reward=True)] * 3, [ran(0, reward=True)] * 3, "fixture_passes"),
    ],
)
def test_each_task_gets_one_reason(fixture, solution, reason):
    found = judge("t", fixture, solution)
    assert found.reason == reason and found.sound is (reason is None)
    assert reason is None or reason in TASK_CHECK_REASONS
    assert found.line().startswith("sound    t" if reason is None else f"unsound  t: {reason}")
