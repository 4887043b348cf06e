"""The hang rule: a request still waiting on the upstream when the attempt ended.

The deadline can land before the proxy's silence bound does, so the request it
was waiting on is ``aborted`` (the proxy stopped), which alone is nobody's fault.
These are the cases the wire tells apart: a hang the attempt ended on is the
provider's (``upstream_silent``), a slow answer after healthy turns is the agent's.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from campaign.profiler import faults
from campaign.profiler.capture import read_capture
from campaign.profiler.summary import summarize
from test_profiler_faults import COMPLETE, line
from test_profiler_proxy import body_for, post, proxy_for, upstream  # noqa: F401 (fixtures)

BOUND = 300.0


def waiting(seq: int, idle_s: float, *, status: int | None = None, silence_s: float | None = BOUND) -> dict:
    """A request in flight when the proxy stopped: nothing received unless ``status``."""
    return line(seq, status, upstream_error="aborted", idle_s=idle_s, silence_s=silence_s)


def healthy(seq: int) -> dict:
    return line(seq, **COMPLETE, idle_s=0.0, silence_s=BOUND)


@pytest.mark.parametrize(
    ("records", "fault"),
    [
        # The defaults: two requests given up on at the bound, the third retry in flight at the deadline.
        ([healthy(1), line(2, None, upstream_error="silent"), line(3, None, upstream_error="silent"), waiting(4, 60)], "upstream_silent"),
        # Any fault before the hang: the client was retrying into a failing provider.
        ([healthy(1), line(2, 529), waiting(3, 30)], "upstream_silent"),
        # ... but a retry the deadline caught a few seconds in proves no hang: the agent's time.
        ([healthy(1), line(2, 429), waiting(3, 3)], None),
        ([healthy(1), line(2, None, upstream_error="cut"), waiting(3, 1)], None),
        # The client gave up on a hung request by its own timeout and retried; both still waiting.
        ([healthy(1), waiting(2, 200), waiting(3, 20)], "upstream_silent"),
        # No model request ever got a byte: the agent never heard from its model.
        ([waiting(1, 12, silence_s=60)], "upstream_silent"),
        # ... unless a short --timeout cut its first answer a few seconds in.
        ([waiting(1, 20)], None),
        # Half the bound, after healthy turns, on nothing: a hang, not a slow answer.
        ([healthy(1), healthy(2), waiting(3, 150)], "upstream_silent"),
        # Half the bound without a byte inside a stream that had begun: a stalled stream.
        ([healthy(1), waiting(2, 160, status=200)], "upstream_silent"),
        # A slow answer after healthy turns, well within the bound: the agent's time.
        ([healthy(1), healthy(2), waiting(3, 149)], None),
        # A stream flowing when the deadline came: the agent's time, however long it ran.
        ([waiting(1, 0.4, status=200)], None),
        ([healthy(1), waiting(2, 1, status=200)], None),
        # A fault the client recovered from, then a slow answer: the recovery breaks the trail.
        ([line(1, 529), healthy(2), waiting(3, 30)], None),
        # A capture from before idle_s was recorded: the trail rules still apply, the bound cannot.
        ([healthy(1), waiting(2, None, silence_s=None)], None),
        ([healthy(1), line(2, None, upstream_error="reset"), waiting(3, None, silence_s=None)], "upstream_silent"),
        # No request ever answered, and a retry the deadline caught at once: the provider
        # burnt the whole deadline (the last fault it met names it), however young the retry.
        ([line(1, None, upstream_error="silent"), line(2, None, upstream_error="silent"), waiting(3, 0.05, silence_s=4)], "upstream_silent"),
        ([line(1, 529), line(2, 500), waiting(3, 1)], "http_5xx"),
        ([line(1, None, upstream_error="silent"), waiting(2, None, silence_s=None)], "upstream_silent"),
        # ... but not once the retry was being answered, nor after any answer at all.
        ([line(1, 529), waiting(2, 1, status=200)], None),
        ([line(1, 400), line(2, 529), waiting(3, 1)], None),
        # Nothing in flight: the last request decides, as before.
        ([healthy(1), healthy(2)], None),
    ],
)
def test_whose_the_wait_at_the_end_was(records, fault):
    assert faults.ending_fault(records) == fault
    # Capture lines come in the order requests ended, not by seq: the rule reads by seq.
    assert faults.ending_fault(list(reversed(records))) == fault


def test_the_last_requests_own_fault_still_decides_first():
    assert faults.ending_fault([waiting(1, 200), line(2, 429)]) == "http_429"


def test_the_hang_that_ended_the_attempt_is_counted_once():
    """Per request an aborted line is no fault; the one the hang rule blames counts once as
    a silent upstream, so the breaker's line and the report name what ended the attempt."""
    records = [healthy(1), line(2, None, upstream_error="silent"), waiting(3, 60), waiting(4, 20)]
    assert faults.request_fault(records[-1]) is None
    assert faults.fault_counts(records)["upstream_silent"] == 2
    slow = [healthy(1), waiting(2, 20)]
    assert sum(faults.fault_counts(slow).values()) == 0


def _given_up(proxy, mode: str, seconds: float = 1.0) -> None:
    """A client that gives up on a request after ``seconds`` (as the deadline's kill does)."""
    request = urllib.request.Request(proxy.url + "/v1/messages", data=json.dumps(body_for("/v1/messages", True)).encode(), method="POST",
                                     headers={"content-type": "application/json", "x-stub-mode": mode})  # fmt: skip
    with pytest.raises(OSError):  # a timeout is an OSError
        with urllib.request.urlopen(request, timeout=seconds) as response:
            response.read()


def test_the_proxy_records_how_long_the_upstream_left_a_request_without_a_byte(upstream, proxy_for):  # noqa: F811
    proxy = proxy_for(upstream.url, "--silence-s", "60")
    status, _ = post(proxy.url, "/v1/messages", body_for("/v1/messages", True))
    assert status == 200
    _given_up(proxy, "hang")
    assert proxy.stop() == 0
    capture = read_capture(proxy.capture)
    done, hung = sorted(capture.model_requests, key=lambda r: r["seq"])
    assert done["silence_s"] == 60 and done["idle_s"] < 1, done
    assert hung["upstream_error"] == "aborted" and hung["status"] is None, hung
    # Measured to when the proxy began to stop: not the shutdown grace after it.
    assert 0.9 <= hung["idle_s"] < 3 and hung["silence_s"] == 60, hung
    # After a healthy turn, a one-second wait within a 60 s bound is the agent's time.
    assert summarize(capture).ending_fault is None


def test_an_attempt_that_never_heard_from_its_model_ended_on_the_provider(upstream, proxy_for):  # noqa: F811
    proxy = proxy_for(upstream.url, "--silence-s", "5")  # the client's second of waiting is a fifth of it
    _given_up(proxy, "hang")
    assert proxy.stop() == 0
    summary = summarize(read_capture(proxy.capture))
    assert summary.ending_fault == "upstream_silent"
    assert summary.diagnostics["provider_faults"]["upstream_silent"] == 1
