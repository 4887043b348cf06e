"""Progress display: pure formatting, plain lines off a TTY, in-place redraw on one."""

from __future__ import annotations

import io

import pytest

from campaign.progress import (
    AttemptFinished,
    Progress,
    ProviderPlan,
    ProviderState,
    SpentBefore,
    TrialsNotAttempted,
    eta_seconds,
    fit,
    format_duration,
    format_spend,
    format_usd,
    header_line,
    provider_line,
    render_block,
    stream_is_tty,
)


class Ticker:
    """A monotonic clock moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def _state(name="zai", total=10, **attempts) -> ProviderState:
    state = ProviderState(name, total, cap_usd=attempts.pop("cap", None))
    for event in attempts.pop("events", []):
        state.apply(event, event.seconds)
    return state


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "?"), (float("nan"), "?"), (0, "0s"), (44.6, "45s"), (60, "1m00s"), (185, "3m05s"), (3600, "1h00m"), (7440, "2h04m")],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_format_money_and_spend():
    assert format_usd(None) == "?"
    assert format_usd(0.01234) == "$0.0123"
    assert format_usd(1234.5) == "$1,234.50"
    assert format_spend(0.12, partial=False, cap=5) == "$0.1200/$5.00"
    assert format_spend(0.12, partial=True, cap=None) == "$0.1200+?/no cap"
    assert format_spend(None, partial=True, cap=5) == "?/$5.00"


def test_provider_line_counts_passes_per_variant_and_partial_spend():
    events = [
        AttemptFinished("zai", "baseline", True, 0.10, 60.0),
        AttemptFinished("zai", "coding", False, 0.20, 120.0),
        AttemptFinished("zai", "coding", True, None, None),
        AttemptFinished("zai", "baseline", None, 0.05, 90.0),
    ]
    state = _state(events=events, cap=2.0)
    line = provider_line(state, ["baseline", "coding"])
    assert line == "zai  4/10 done  baseline 1/2 pass  coding 1/2 pass  spend $0.3500+?/$2.00  eta 9m00s"


def test_unknown_spend_is_never_shown_as_zero():
    state = _state(events=[AttemptFinished("zai", "baseline", True, None, 10.0)])
    assert "spend ?/no cap" in provider_line(state, ["baseline", "coding"])
    # Nothing attempted yet: measured spend is an observed zero.
    assert "spend $0.0000/no cap" in provider_line(_state(), ["baseline", "coding"])


def test_eta_is_unknown_until_an_attempt_is_timed():
    untimed = _state(events=[AttemptFinished("zai", "baseline", True, 0.1, None)])
    assert eta_seconds([untimed]) is None
    assert provider_line(untimed, ["baseline"]).endswith("eta ?")
    timed = _state("offline", 4, events=[AttemptFinished("offline", "coding", True, 0.0, 30.0)])
    # The untimed provider borrows the mean over all providers: 9 x 30 + 3 x 30.
    assert eta_seconds([untimed, timed]) == 360.0
    finished = _state("offline", 1, events=[AttemptFinished("offline", "coding", True, 0.0, None)])
    assert eta_seconds([finished]) == 0.0


def test_not_attempted_trials_leave_the_remaining_work():
    state = _state(total=6, events=[AttemptFinished("zai", "baseline", True, 0.0, 10.0)])
    state.apply(TrialsNotAttempted("zai", 3, "budget"), None)
    assert state.remaining == 2
    assert "1/6 done  3 not attempted" in provider_line(state, ["baseline"])
    assert eta_seconds([state]) == 20.0


def test_header_and_block():
    a = _state("openai-codex", 4, events=[AttemptFinished("openai-codex", "baseline", True, 0.5, 100.0)])
    b = _state("zai", 4)
    assert header_line([a, b], elapsed=125, cap_usd=10.0) == "campaign  1/8 done  spend $0.5000/$10.00  elapsed 2m05s  eta 11m40s"
    block = render_block([a, b], ["baseline", "coding"], elapsed=125, cap_usd=None)
    assert len(block) == 3 and block[1].startswith("  openai-codex  1/4 done") and block[2].startswith("  zai  0/4 done")
    assert block[2].endswith("eta 6m40s")


def test_fit_cuts_long_lines_for_the_terminal():
    assert fit("short", 80) == "short"
    assert fit("x" * 100, 40) == "x" * 36 + "..."
    assert len(fit("x" * 100, 40)) == 39


def test_plain_lines_one_per_finished_attempt():
    clock, out = Ticker(), io.StringIO()
    progress = Progress([ProviderPlan("offline", 4), ProviderPlan("zai", 4, cap_usd=1.0)], ["baseline", "coding"], cap_usd=3.0, stream=out, isatty=False, clock=clock)
    progress.start()
    assert out.getvalue() == ""
    clock.now += 40
    progress.update(AttemptFinished("offline", "baseline", True, 0.0123, None, trial_id="t-0001"))
    clock.now += 20
    progress.update(AttemptFinished("zai", "coding", False, None, 25.0))
    progress.update(TrialsNotAttempted("zai", 3, "budget"))
    progress.tick()  # nothing to redraw off a TTY
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines == [
        "progress: offline 1/4 t-0001 baseline pass  attempt spend $0.0123  campaign 1/8  spend $0.0123/$3.00  elapsed 40s  eta 4m40s",
        "progress: zai 1/4 coding fail  attempt spend ?  campaign 2/8  spend $0.0123+?/$3.00  elapsed 1m00s  eta 3m15s",
        "progress: zai 3 trial(s) not attempted (budget); 0 left",
        "progress: campaign  2/8 done  3 not attempted  spend $0.0123+?/$3.00  elapsed 1m00s  eta 2m00s",
    ]
    assert "\x1b" not in out.getvalue() and "\r" not in out.getvalue()


def test_a_tty_redraws_one_block_in_place():
    clock, out = Ticker(), FakeTTY()
    progress = Progress([ProviderPlan("offline", 2)], ["baseline", "coding"], stream=out, clock=clock, width=200)
    assert progress.tty
    progress.start()
    first = out.getvalue()
    assert first.count("\n") == 2 and first.startswith("\r\x1b[2Kcampaign  0/2 done")
    clock.now += 30
    progress.update(AttemptFinished("offline", "coding", True, 0.01, None))
    redraw = out.getvalue()[len(first):]
    # Back up over the two lines just drawn, then clear and rewrite each.
    assert redraw.startswith("\x1b[2F\r\x1b[2Kcampaign  1/2 done")
    assert redraw.count("\r\x1b[2K") == 2
    assert "coding 1/1 pass" in redraw and "eta 30s" in redraw
    progress.message("campaign 1: resumed")
    tail = out.getvalue()[len(first) + len(redraw):]
    assert tail.startswith("\x1b[2F\x1b[Jcampaign 1: resumed\n\r\x1b[2Kcampaign")


def test_tty_lines_fit_the_width():
    out = FakeTTY()
    progress = Progress([ProviderPlan("a-provider-with-a-long-name", 2)], ["baseline", "coding"], stream=out, clock=Ticker(), width=30)
    progress.start()
    for line in out.getvalue().split("\n")[:-1]:
        assert len(line.replace("\r\x1b[2K", "")) <= 29


def test_an_80_column_block_keeps_every_essential_field():
    # The main job's shape (one provider, no cap, two variants) and a capped provider
    # with unknown spend and skipped trials: at 80 columns nothing may be cut away.
    clock, out = Ticker(), FakeTTY()
    plans = [ProviderPlan("offline", 24), ProviderPlan("anthropic", 24, cap_usd=5.0)]
    progress = Progress(plans, ["baseline", "coding"], cap_usd=10.0, stream=out, clock=clock, width=80)
    progress.start()
    for n in range(12):
        clock.now += 250
        progress.update(AttemptFinished("offline", "baseline", True, 0.0736, None))
        progress.update(AttemptFinished("offline", "coding", n % 3 > 0, 0.0347, None))
        progress.update(AttemptFinished("anthropic", "coding" if n % 2 else "baseline", True, None if n == 3 else 1.25, None))
    progress.update(TrialsNotAttempted("anthropic", 3, "spend_limit"))
    block = out.getvalue().split("\x1b[3F")[-1].replace("\r\x1b[2K", "").splitlines()
    assert len(block) == 3
    for line in block:
        assert len(line) <= 79 and not line.endswith("..."), line
    header, offline, anthropic = block
    assert header.startswith("campaign 36/48 (3 not run) $") and "/$10.00" in header and "elapsed 50m00s" in header and "eta " in header
    assert offline.split()[:2] == ["offline", "24/24"] and "baseline 12/12" in offline and "coding 8/12" in offline and "no cap" in offline and "eta 0s" in offline
    assert anthropic.split()[:2] == ["anthropic", "12/24"] and "baseline 6/6" in anthropic and "coding 6/6" in anthropic
    assert "+?/$5.00" in anthropic and "eta " in anthropic


def test_a_wide_terminal_keeps_the_full_labels():
    state = _state("offline", 24, events=[AttemptFinished("offline", "baseline", True, 0.07, 60.0)])
    wide = render_block([state], ["baseline", "coding"], elapsed=60, cap_usd=None, width=200)
    assert wide == render_block([state], ["baseline", "coding"], elapsed=60, cap_usd=None)
    assert "1/24 done" in wide[1] and "baseline 1/1 pass" in wide[1] and "spend $0.0700/no cap" in wide[1]


def test_preload_counts_earlier_work_without_printing():
    out = io.StringIO()
    progress = Progress([ProviderPlan("offline", 3)], ["baseline"], stream=out, isatty=False, clock=Ticker())
    progress.preload([AttemptFinished("offline", "baseline", True, 0.5, 60.0), TrialsNotAttempted("offline", 1)])
    assert out.getvalue() == ""
    progress.close()
    assert out.getvalue() == "progress: campaign  1/3 done  1 not attempted  spend $0.5000/no cap  elapsed 0s  eta 1m00s\n"


def test_unknown_providers_and_duplicate_plans_are_refused():
    with pytest.raises(ValueError, match="unique"):
        Progress([ProviderPlan("zai", 1), ProviderPlan("zai", 2)], ["baseline"], stream=io.StringIO())
    progress = Progress([ProviderPlan("zai", 1)], ["baseline"], stream=io.StringIO(), isatty=False)
    with pytest.raises(ValueError, match="not in this campaign"):
        progress.update(AttemptFinished("nope", "baseline", True, 0.0, 1.0))


def test_tty_detection():
    assert stream_is_tty(FakeTTY(), {"TERM": "xterm-256color"})
    assert not stream_is_tty(FakeTTY(), {"TERM": "dumb"})
    assert not stream_is_tty(io.StringIO(), {"TERM": "xterm"})


def test_a_broken_stream_never_stops_the_campaign():
    out = io.StringIO()
    progress = Progress([ProviderPlan("zai", 2)], ["baseline"], stream=out, isatty=False, clock=Ticker())
    out.close()
    progress.update(AttemptFinished("zai", "baseline", True, 0.1, 5.0))
    progress.close()
    assert progress.states[0].done == 1


def test_an_attempt_without_a_verdict_counts_its_spend_and_leaves_its_trial_to_run():
    events = [
        AttemptFinished("zai", "coding", None, 0.02, 5.0, "zai/t/r1/coding", outcome="provider_error (http_529)"),
        AttemptFinished("zai", "coding", True, 0.10, 60.0, "zai/t/r1/coding"),
    ]
    state = _state(total=2, events=events)
    assert (state.done, state.no_verdict, state.remaining) == (1, 1, 1)
    line = provider_line(state, ["coding"])
    assert "1/2 done  1 no verdict  coding 1/1 pass  spend $0.1200/no cap" in line
    out = io.StringIO()
    progress = Progress([ProviderPlan("zai", 2)], ["coding"], stream=out, isatty=False, clock=Ticker())
    progress.update(events[0])
    assert "zai/t/r1/coding coding provider_error (http_529)" in out.getvalue()


def test_a_partial_spend_is_shown_as_a_lower_bound():
    state = _state(events=[AttemptFinished("zai", "coding", None, 0.05, 5.0, outcome="provider_error", spend_partial=True)])
    assert "spend $0.0500+?/no cap" in provider_line(state, ["coding"])


def test_a_provider_under_the_campaigns_total_cap_says_no_cap_of_its_own():
    from campaign.progress import UNDER_OTHER_CAP

    state = _state(cap=UNDER_OTHER_CAP, events=[AttemptFinished("zai", "coding", True, 0.05, 5.0)])
    line = provider_line(state, ["coding"])
    assert "spend $0.0500  eta" in line and "no cap" not in line
    assert "spend $0.0500/$2.00" in header_line([state], elapsed=1.0, cap_usd=2.0)


def test_spend_before_counts_its_spend_and_nothing_else():
    state = ProviderState("zai", 4)
    state.apply(SpentBefore("zai", 0.25), None)
    state.apply(SpentBefore("zai", None), None)
    state.apply(SpentBefore("zai", 0.5, spend_partial=True), None)
    assert (state.done, state.no_verdict, state.remaining, state.passes, state.durations) == (0, 0, 4, {}, [])
    assert (state.spend_usd, state.spend_known, state.spend_unknown) == (0.75, 2, 2)
