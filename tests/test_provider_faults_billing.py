"""The operator's faults and an error dressed as a 200, end to end through the real clients.

A provider that refuses for money (HTTP 402, Anthropic's "credit balance is too
low" 400), or has no such model (404), fails every attempt the same way until
the operator fixes the account or the catalog: no verdict, and the provider is
halted with the run's exit 3, as for a refused credential. A 200 whose body is
only an error (OpenRouter's ``{"error": {"code": 502}}``) is the provider's
server error, not a wait the client's retries burn its deadline on.
The upstream is ``campaign replay-server`` with the fault injected, listed as a
custom provider (see ``test_provider_faults``).
"""

from __future__ import annotations

import json

import pytest

from campaign.vocabulary import PROVIDER_FAULT_WORDS
from test_provider_faults import Case, case, diagnostics  # noqa: F401 (the fixture)

CASES = [
    ("claude-code", "credit-400", "http_billing"),
    ("codex", "http-402", "http_billing"),
    ("claude-code", "model-404", "http_not_found"),
]


@pytest.mark.parametrize(("case", "fault", "kind"), [pytest.param(*c, id=f"{c[0]}-{c[1]}") for c in CASES], indirect=["case"])
def test_a_fault_no_retry_fixes_voids_every_attempt_and_halts_the_provider(case: Case, fault: str, kind: str):  # noqa: F811
    case.upstream.start(f"{fault}:*")
    done = case.campaign("--timeout", "60")
    assert done.returncode == 3, done.stdout + done.stderr
    word = PROVIDER_FAULT_WORDS[kind]
    assert f"halted flaky: 3 attempts in a row ended on provider errors ({word} x" in done.stderr, done.stderr
    attempts = case.attempts()
    assert len(attempts) == 3
    for a in attempts:
        assert (a["status"], a["outcome"], a["failure_class"], a["verified_pass"]) == ("faulted", "provider_error", kind, None), a
        assert diagnostics(a)["ending_fault"] == kind
        # An HTTP error response without usage was not billed: a proven 0.
        assert (a["spend_complete"], a["output_tokens"]) == (1, 0), a
    assert case.campaign_row() == ("stopped", "provider_unavailable")
    assert case.trial_statuses() == ["scheduled", "scheduled"]  # schedulable once the operator fixed it
    report = json.loads((case.out / "report.json").read_text())
    assert {f for row in report["provider_faults"] for f in row["by_fault"]} == {kind}
    assert sum(row["attempts"] for row in report["provider_faults"]) == 3
    assert f"{word} x" in (case.out / "report.md").read_text()


@pytest.mark.parametrize("case", ["mini-swe-agent"], indirect=True)
def test_a_200_that_is_only_an_error_ends_the_attempt_before_its_deadline(case: Case):
    """mini-swe-agent (through litellm) retries it with its own back-off (4 s, then 8 s):
    three in a row end the attempt as the provider's fault, long before the deadline its
    retries would otherwise burn. The trial runs again and passes once the provider answers.
    (That such faults on every attempt halt the provider is the cases above.)"""
    case.upstream.start("error-200:1", "error-200:2", "error-200:3")
    done = case.campaign("--timeout", "60")
    assert done.returncode == 0, done.stdout + done.stderr
    first, *rest = case.attempts()
    assert (first["status"], first["outcome"], first["failure_class"], first["verified_pass"]) == ("faulted", "provider_error", "http_5xx", None), first
    assert diagnostics(first)["ending_fault"] == "http_5xx" and diagnostics(first)["provider_faults"]["http_5xx"] == 3
    assert first["wall_seconds"] < 60, first  # ended on the third fault, not by the deadline
    # The 200s carried no usage: what they cost is unknown, never 0.
    assert first["spend_complete"] == 0 and first["uncached_input_tokens"] is None, first
    assert [(a["status"], a["outcome"]) for a in rest] == [("finished", "passed")] * 2, rest
    assert case.campaign_row() == ("completed", None)
    report = json.loads((case.out / "report.json").read_text())
    assert [(row["attempts"], set(row["by_fault"])) for row in report["provider_faults"]] == [(1, {"http_5xx"})]
    assert f"{PROVIDER_FAULT_WORDS['http_5xx']} x" in (case.out / "report.md").read_text()
