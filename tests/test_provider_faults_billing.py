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
    ("mini-swe-agent", "error-200", "http_5xx"),
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
        if kind == "http_5xx":
            # The 200 carried no usage: what it cost is unknown, never 0.
            assert a["spend_complete"] == 0 and a["uncached_input_tokens"] is None, a
        else:
            # An HTTP error response without usage was not billed: a proven 0.
            assert (a["spend_complete"], a["output_tokens"]) == (1, 0), a
    assert case.campaign_row() == ("stopped", "provider_unavailable")
    assert case.trial_statuses() == ["scheduled", "scheduled"]  # schedulable once the operator fixed it
    report = json.loads((case.out / "report.json").read_text())
    assert {f for row in report["provider_faults"] for f in row["by_fault"]} == {kind}
    assert sum(row["attempts"] for row in report["provider_faults"]) == 3
    assert f"{word} x" in (case.out / "report.md").read_text()
