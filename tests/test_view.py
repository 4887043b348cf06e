"""`campaign view`: option rules, read-only store access, and what the pages may show.

The pages are fetched through aiohttp's test client over a real loopback
socket (and, for the served-store check, from a real `campaign view`
process). The browser end-to-end test lives in test_view_browser.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from decimal import Decimal
import hashlib
import html
import json
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import event, update
from sqlalchemy.exc import DBAPIError
from test_report_fixtures import full_attempt, insert_campaign, paired_trials

from campaign.cli import cli
from campaign.report import build_report
from campaign.store.limits import SpendLimits
from campaign.store import chain, repository
from campaign.store.migrate import open_store
from campaign.store.models import Attempt, Campaign
from campaign.view import check_host, snapshot
from campaign.view.app import build_app
from campaign.view.pages import differences_section, summary_section
from campaign.view.snapshot import campaign_snapshot
from campaign.view.model import Building
from campaign.view.source import CampaignSummary, ChainChecks, ChainVerdict, open_readonly

URL_LINE = re.compile(r"^campaign view: serving (http://127\.0\.0\.1:\d+/\S*) \(Ctrl-C to stop\)$")
CELL = re.compile(r'<td data-variant="(\w+)" data-field="(\w+)" data-value="([^"]*)"[^>]*>([^<]*)</td>')


@pytest.fixture(autouse=True)
def _no_ambient_db(monkeypatch):
    """An operator's $CAMPAIGN_DB must not decide which store these tests read."""
    monkeypatch.delenv("CAMPAIGN_DB", raising=False)


def make_campaign(engine, trials=None, **kwargs) -> int:
    """A paired campaign written straight into the store, its attempt rows sealed as the engine seals them."""
    if trials is None:
        trials = paired_trials(["alpha", "beta"], 2, lambda task, rep, variant: full_attempt(verified_pass=variant == "coding" or rep == 1))
    cid = insert_campaign(engine, trials, **kwargs)
    chain.seal_pending(engine, cid)
    return cid


@pytest.fixture
def ro(engine, db_url):
    """The view's own read-only engine on the test store (created after the rows are in)."""
    engines = []

    def _open():
        engines.append(open_readonly(db_url))
        return engines[-1]

    yield _open
    for e in engines:
        e.dispose()


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    text: str


def fetch(engine, *paths: str, method: str = "GET", headers: dict[str, str] | None = None, allow_remote: bool = False) -> list[Reply]:
    async def go() -> list[Reply]:
        out = []
        async with TestClient(TestServer(build_app(engine, allow_remote=allow_remote))) as client:
            for path in paths:
                response = await client.request(method, path, headers=headers)
                out.append(Reply(response.status, dict(response.headers), await response.text()))
        return out

    return asyncio.run(go())


def page(engine, path: str) -> str:
    (reply,) = fetch(engine, path)
    assert reply.status == 200, reply.text
    return reply.text


def fetch_after(engine, path: str, *changes) -> list[str]:
    """``path`` fetched from one app (what it keeps between requests stays) after each
    change (a callable, or None for none)."""

    async def go() -> list[str]:
        texts = []
        async with TestClient(TestServer(build_app(engine))) as client:
            for change in changes:
                if change is not None:
                    change()
                response = await client.get(path)
                texts.append(await response.text())
        return texts

    return asyncio.run(go())


def row_reads(engine) -> list[str]:
    """Each statement that reads every attempt row of a campaign (``chain.read_rows``)
    on ``engine`` from now on, as it runs."""
    reads: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def every_row_read(conn, cursor, statement, parameters, context, executemany) -> None:
        if "AS schema_diagnostics" in statement and statement.rstrip().endswith("ORDER BY attempts.seq"):
            reads.append(statement)

    return reads


def amend_last(engine, campaign_id: int) -> None:
    """The engine amends the campaign's last row: its chain head moves."""
    last = max(repository.attempts_for(engine, campaign_id), key=lambda a: a.seq)
    chain.amend_tail(engine, last.id, teardown_outcome="recovered")


def cells(text: str) -> dict[tuple[str, str], tuple[object, str]]:
    """(variant, field) -> (the JSON value the cell carries, the text it shows)."""
    return {(v, f): (json.loads(html.unescape(value)), html.unescape(shown)) for v, f, value, shown in CELL.findall(text)}


# --- option rules: exit 2, one line, nothing written ----------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--host", "0.0.0.0"], "--host"),
        (["--host", "192.168.1.10"], "--host"),
        (["--host", "example.com"], "--host"),
        (["--db", "{tmp}/a.db", "--output-dir", "{tmp}"], "--output-dir or --db, not both"),
        (["--db", "{tmp}/missing/store.db"], "no store at"),
        (["--output-dir", "{tmp}/nowhere"], "is not a directory"),
        (["--output-dir", "{tmp}"], "holds no campaign store"),
        (["--port", "70000"], "--port"),
        (["--campaign", "0"], "--campaign"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(runner, tmp_path, args, needle):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = runner.invoke(cli, ["view", *args], env={"CAMPAIGN_DB": str(tmp_path / "env.db")})
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert len(result.output.strip().splitlines()[-1]) > 0
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_campaign_or_an_empty_store_is_refused(runner, engine, db_url, db_path, tmp_path):
    make_campaign(engine)
    result = runner.invoke(cli, ["view", "--db", db_url, "--campaign", "99"])
    assert result.exit_code == 2 and "no campaign 99" in result.output
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    result = runner.invoke(cli, ["view", "--db", str(empty)])
    assert result.exit_code == 2 and "holds no campaign store" in result.output
    assert empty.read_bytes() == b""
    # Another program's database: refused as such, never served as an empty list.
    foreign = tmp_path / "foreign.db"
    with __import__("sqlite3").connect(foreign) as conn:
        conn.execute("CREATE TABLE foo (x INTEGER)")
    before = foreign.read_bytes()
    result = runner.invoke(cli, ["view", "--db", str(foreign)])
    assert result.exit_code == 2 and "is a database with tables that are not a campaign store" in result.output, result.output
    assert foreign.read_bytes() == before


def test_output_dir_wins_over_campaign_db_from_the_environment(runner, tmp_path, monkeypatch):
    # An explicit --output-dir names the store; $CAMPAIGN_DB is only a default, so this
    # is not a conflict: the error is about the directory, not about both options.
    result = runner.invoke(cli, ["view", "--output-dir", str(tmp_path)], env={"CAMPAIGN_DB": str(tmp_path / "x.db")})
    assert result.exit_code == 2 and "holds no campaign store" in result.output


def test_loopback_hosts_pass_and_others_need_allow_remote():
    assert check_host("localhost") == "127.0.0.1"
    assert check_host("127.0.0.2") == "127.0.0.2"
    assert check_host("::1") == "::1"
    assert check_host("0.0.0.0", allow_remote=True) == "0.0.0.0"
    with pytest.raises(Exception, match="--allow-remote"):
        check_host("0.0.0.0")


# --- the pages show the report's numbers ---------------------------------------------------


def test_the_variant_table_carries_exactly_the_report_numbers(engine, ro):
    cid = make_campaign(engine)
    view = ro()
    text = page(view, f"/campaigns/{cid}")
    report = build_report(view, cid)
    shown = cells(text)
    for variant in report["variants"]:
        for field in ("attempts", "successes", "success_rate", "measured_spend_usd", "cost_per_verified_success_usd", "wall_seconds_mean", "tool_error_recoveries"):
            value, words = shown[(variant["variant"], field)]
            assert value == variant[field], (variant["variant"], field)
            if isinstance(value, int) and not isinstance(value, bool):
                assert words == str(value)
    assert shown[("baseline", "success_rate")][1] == f"{report['variants'][0]['success_rate']:.3f}"
    # The JSON endpoint carries the very same sanitized report.
    (reply,) = fetch(view, f"/api/campaigns/{cid}")
    assert json.loads(reply.text)["report"] == json.loads(json.dumps(report))


def test_the_json_endpoint_says_what_json_would_say(engine, ro):
    """The report part is encoded by orjson, which spells some floats its own way (1e-05 as
    0.00001): the values are the json module's, key order included."""
    cid = make_campaign(engine, paired_trials(["alpha"], 2, lambda task, rep, variant: full_attempt(cost_usd=1e-05 * rep, wall_seconds=1 / 3)))
    view = ro()
    snap = campaign_snapshot(view, ChainChecks(), cid)
    expected = json.loads(json.dumps(snap.as_json(), allow_nan=False))
    (reply,) = fetch(view, f"/api/campaigns/{cid}")
    assert reply.status == 200 and reply.headers["Content-Type"].startswith("application/json")
    got = json.loads(reply.text)
    assert got == expected and list(got) == list(expected) and list(got["report"]) == list(expected["report"])
    assert got["report"]["trials"][0]["cost_usd"] == 1e-05


def test_each_campaign_counts_only_its_own_trials(engine, ro):
    small = make_campaign(engine, paired_trials(["alpha"], 1, lambda task, rep, variant: full_attempt()))
    large = make_campaign(engine)
    view = ro()
    listed, *statuses = (json.loads(r.text) for r in fetch(view, "/api/campaigns", f"/api/campaigns/{small}/status", f"/api/campaigns/{large}/status"))
    counts = {c["id"]: (c["finished"], c["scheduled"]) for c in listed["campaigns"]}
    assert counts == {small: (2, 2), large: (8, 8)}
    assert [(s["campaign"]["finished"], s["campaign"]["scheduled"]) for s in statuses] == [counts[small], counts[large]]


def test_null_figures_say_why_in_words_never_zero(engine, ro):
    def attempt(task, rep, variant):
        if variant == "coding":
            return full_attempt(verified_pass=False, wall_seconds=None, tool_errors=None, cost_usd=None, spend_complete=False)
        return full_attempt()

    cid = make_campaign(engine, paired_trials(["alpha"], 1, attempt))
    text = page(ro(), f"/campaigns/{cid}")
    shown = cells(text)
    assert shown[("coding", "success_rate")] == (0.0, "0.000")  # a measured zero is a zero
    assert shown[("coding", "cost_per_verified_success_usd")] == (None, "undefined: zero verified successes")
    assert shown[("coding", "wall_seconds_mean")] == (None, "unknown: 1 attempt did not report it")
    assert shown[("coding", "tool_error_recoveries")] == (None, "unknown: 1 attempt did not report it")
    assert shown[("coding", "measured_spend_usd")] == (None, "no attempt reported its spend")
    for (_variant, _field), (value, words) in shown.items():
        if value is None:
            assert words not in ("0", "0.0", "0.000", "0.0000", "")
    assert "coding: wall seconds: unknown: 1 attempt did not report it" in html.unescape(text)
    # The wall-time difference has no pair with both times: its reason, in words.
    assert "no pair has both wall times" in text


def test_the_differences_say_which_comparison_is_exploratory_and_why_an_interval_is_missing(engine):
    # Twelve tasks, each coding pass a baseline failure, wall times on three of them only.
    trials = [
        {"task": f"t{i:02d}", "repetition": 1, "variant": v, "attempt": {"verified_pass": v == "coding", "wall_seconds": (100.0 + i * (v == "coding")) if i < 3 else None}}
        for i in range(12)
        for v in ("baseline", "coding")
    ]
    shown = html.unescape(differences_section(build_report(engine, insert_campaign(engine, trials))["paired_differences"]))
    assert "Exploratory (wall seconds): few task clusters have both wall times; not a global ranking." in shown
    assert "every task's mean difference is the same: no interval" in shown


def test_plot_trials_in_schedule_order_and_filters(engine, ro):
    trials = paired_trials(["alpha", "beta"], 1, lambda *a: full_attempt())
    trials.append({"task": "alpha", "repetition": 2, "variant": "baseline", "attempt": None, "reason": "spend_limit"})
    trials.append({"task": "alpha", "repetition": 2, "variant": "coding", "attempt": full_attempt(status="interrupted", outcome="interrupted", failure_class="interrupted")})
    cid = make_campaign(engine, trials, stop_reason="spend_limit", state="stopped")
    text = page(ro(), f"/campaigns/{cid}")
    assert re.search(r'<div id="forest" class="plot"><svg [^>]*>.*</svg>\s*</div>', text, flags=re.S)
    ids = re.findall(r'<tr data-trial="([^"]+)"', text)
    assert ids == ["alpha/r1/baseline", "alpha/r1/coding", "beta/r1/baseline", "beta/r1/coding", "alpha/r2/baseline", "alpha/r2/coding"]
    rows = dict(re.findall(r'<tr data-trial="([^"]+)"[^>]*>(.*?)</tr>', text))
    skipped = next(v for k, v in rows.items() if k.endswith("alpha/r2/baseline"))
    assert "spend_limit: spend limit reached" in skipped
    # Whether the report lists it as an interrupted attempt or as a trial without a result,
    # its reason column says it was interrupted.
    interrupted = next(v for k, v in rows.items() if k.endswith("alpha/r2/coding"))
    assert re.search(r"<td>interrupted[ :(][^<]*</td></?t", interrupted + "</tr>"), interrupted
    for name in ("variant", "outcome", "provider"):
        assert f'id="filter-{name}"' in text
    assert 'data-outcome="not_attempted"' in text and 'data-variant="coding"' in text
    assert "stop reason</dt><dd>spend_limit" in text


def test_provider_spend_against_the_cap_or_no_cap(engine, ro):
    per_provider = make_campaign(engine, experiment={"providers": [{"name": "openai-codex"}]})
    repository.record_spend_limits(engine, per_provider, SpendLimits(None, Decimal("0.5"), provider_max_spend_usd=Decimal("2.50")))
    whole = make_campaign(engine)
    repository.record_spend_limits(engine, whole, SpendLimits(5, 1))
    uncapped = make_campaign(engine)
    view = ro()
    assert "$2.0000/$2.50" in page(view, f"/campaigns/{per_provider}")
    assert "All providers: $2.0000/$5.00." in page(view, f"/campaigns/{whole}")
    assert "no cap" in page(view, f"/campaigns/{uncapped}")


def test_plan_only_and_nonpaired_campaigns_say_why_there_is_no_report(engine, ro):
    planned = insert_campaign(engine, paired_trials(["alpha"], 1, lambda *a: None), state="planned", live=False)
    nonpaired = make_campaign(engine, kind="nonpaired")
    view = ro()
    assert "plan-only" in page(view, f"/campaigns/{planned}")
    assert "nonpaired run" in page(view, f"/campaigns/{nonpaired}")
    listing = page(view, "/")
    assert f'<tr data-campaign="{planned}">' in listing and "0/2" in listing


def test_a_running_campaign_refreshes_itself(engine, ro):
    running = make_campaign(engine, state="running")
    done = make_campaign(engine)
    view = ro()
    text = page(view, f"/campaigns/{running}")
    match = re.search(r'data-refresh-url="([^"]+)" data-fingerprint="([^"]+)"', text)
    assert match and match.group(1) == f"/api/campaigns/{running}/status"
    (status,) = fetch(view, match.group(1))
    assert json.loads(status.text)["fingerprint"] == html.unescape(match.group(2))
    assert "data-refresh-url" not in page(view, f"/campaigns/{done}")
    assert 'data-refresh-url="/api/campaigns"' in page(view, "/")


# --- what the pages may never show -------------------------------------------------------


def test_no_canary_reaches_any_page_or_json(engine, ro, monkeypatch):
    from test_report_redaction import CANARY, plant

    cid = plant(engine, monkeypatch)
    paths = ["/", f"/campaigns/{cid}", "/api/campaigns", f"/api/campaigns/{cid}", f"/api/campaigns/{cid}/status"]
    for path, reply in zip(paths, fetch(ro(), *paths)):
        assert reply.status == 200, (path, reply.text)
        lowered = reply.text.lower()
        assert CANARY.lower() not in lowered, f"canary reached {path}"
        assert "/home/op" not in lowered and "/tmp/campaign-paired-runtime" not in lowered, f"a path reached {path}"
        assert "traceback" not in lowered


def test_values_are_escaped(engine, ro):
    # An enum outside its vocabulary is already "unlisted"; markup in stored text never reaches the page raw.
    cid = make_campaign(engine, stop_reason="<script>alert(1)</script>")
    text = page(ro(), f"/campaigns/{cid}") + page(ro(), "/")
    assert "<script>alert" not in text and "alert(1)" not in text
    assert "unlisted" in text


def test_errors_show_no_exception_text(engine, ro):
    cid = make_campaign(engine)
    missing, static, unknown = fetch(ro(), "/campaigns/424242", "/static/view.js", "/static/../source.py")
    assert missing.status == 404 and "No such campaign" in missing.text
    assert static.status == 200 and static.headers["Content-Type"].startswith("text/javascript")
    assert unknown.status == 404
    # An id no 64-bit row can have names no campaign either: never a 500.
    huge = "9" * 23
    assert [r.status for r in fetch(ro(), f"/campaigns/{huge}", f"/api/campaigns/{huge}", f"/api/campaigns/{huge}/status")] == [404, 404, 404]
    # Past 4,300 digits int() refuses the text itself: that was a 500 and a terminal line each.
    longer = "1" * 4301
    assert [r.status for r in fetch(ro(), f"/campaigns/{longer}", f"/api/campaigns/{longer}", f"/api/campaigns/{longer}/status")] == [404, 404, 404]
    assert fetch(ro(), f"/campaigns/{'0' * 30}{cid}")[0].status == 200  # leading zeros are the id they pad


# --- the tamper warning ------------------------------------------------------------------


def test_a_tampered_store_shows_the_chain_warning(engine, ro):
    cid = make_campaign(engine)
    view = ro()
    intact = page(view, f"/campaigns/{cid}")
    assert 'id="chain-ok"' in intact and 'id="chain-warning"' not in page(view, "/")
    # What "intact" covers, said where it is shown: the columns a run changes are not in the chain.
    assert "state, stop reason and spend limits are not in the chain" in intact
    with engine.begin() as conn:
        conn.execute(update(Attempt).where(Attempt.campaign_id == cid, Attempt.seq == 2).values(wall_seconds=1.0))
    text = page(view, f"/campaigns/{cid}")
    assert 'id="chain-warning"' in text and "Hash chain verification FAILED" in text and "edited ×1" in text and "seq 2" in text
    assert 'id="chain-warning"' in page(view, "/")
    (reply,) = fetch(view, f"/api/campaigns/{cid}")
    assert json.loads(reply.text)["chain"] == {"intact": False, "rows": 8, "problems": {"edited": 1}, "seqs": [2]}


def test_a_campaign_is_verified_once_per_change_of_its_chain_head(engine, ro):
    """A refresh does not verify 100,000 rows again while the chain head stands still; an
    edit to an older row moves the head too (the store's change stamp), so it shows at once."""
    cid = make_campaign(engine)
    view = ro()

    def edit() -> None:
        with engine.begin() as conn:
            conn.execute(update(Attempt).where(Attempt.campaign_id == cid, Attempt.seq == 2).values(wall_seconds=1.0))

    def amend() -> None:
        amend_last(engine, cid)

    bodies = [json.loads(text) for text in fetch_after(view, f"/api/campaigns/{cid}", None, None, edit, amend)]
    first, again, edited, moved = [(body["chain"], body["report"]["integrity"]["chain_verified"]) for body in bodies]
    assert first == again == ({"intact": True, "rows": 8, "problems": {}, "seqs": []}, True)
    assert edited == moved == ({"intact": False, "rows": 8, "problems": {"edited": 1}, "seqs": [2]}, False)


def test_a_closed_campaign_edited_to_read_as_running_is_not_shown_as_verified(engine, ro):
    """A running campaign's head leaves out the store's change stamp (heartbeats would move
    it every few seconds), and its state is not in the chain: an edit that makes a closed
    campaign read as running, flips verdicts and moves the report's inputs must not get
    the verdict kept from before. A report built then verifies the rows it shows."""
    cid = make_campaign(engine)
    view = ro()

    def reads_as_running() -> None:  # the page's refresh then verifies it under a head without the stamp
        with engine.begin() as conn:
            conn.execute(update(Campaign).where(Campaign.id == cid).values(state="running"))

    def tamper() -> None:
        with engine.begin() as conn:
            conn.execute(update(Attempt).where(Attempt.campaign_id == cid, Attempt.seq.in_([1, 3])).values(verified_pass=False))
            conn.execute(update(Campaign).where(Campaign.id == cid).values(spend_limits_json='{"max_spend_usd": "100"}'))

    *before, tampered = (json.loads(text) for text in fetch_after(view, f"/api/campaigns/{cid}", None, reads_as_running, tamper))
    assert [(b["chain"]["intact"], b["report"]["integrity"]["chain_verified"]) for b in before] == [(True, True)] * 2
    assert tampered["report"]["integrity"]["chain_verified"] is False
    assert tampered["chain"] == {"intact": False, "rows": 8, "problems": {"edited": 2}, "seqs": [1, 3]}


def test_a_running_campaigns_kept_verdict_is_checked_again_after_a_while(engine, ro):
    """An edit to an older row of a running campaign does not move its head: the kept
    verdict stands for at most ``RECHECK_S``, then the rows are verified again."""
    cid = make_campaign(engine, state="running")
    view, now = ro(), [100.0]
    checks = ChainChecks(clock=lambda: now[0])
    assert checks.problems(view, cid) == ()
    with engine.begin() as conn:
        conn.execute(update(Attempt).where(Attempt.campaign_id == cid, Attempt.seq == 2).values(wall_seconds=1.0))
    now[0] += ChainChecks.RECHECK_S - 1
    assert checks.problems(view, cid) == ()  # within the window: kept
    now[0] += 1
    assert [(p.kind, p.seq) for p in checks.problems(view, cid)] == [("edited", 2)]
    assert checks.known({cid: chain.head(view, cid)}) is None  # never lent to a report


def test_a_refresh_after_a_change_reads_the_attempt_rows_once(engine, ro):
    """The report verifies the rows it reads and leaves that verdict for the page: a
    refresh after the chain head moved reads every attempt row once, not once to verify
    and again for the report; one after a change that left the head where it was, once
    (the kept verdict); one after no change, never. (A tampered chain's verdict, found
    this way, is in the test above.)"""
    trials = paired_trials(["alpha"], 2, lambda task, rep, variant: full_attempt() if rep == 1 else None)
    trials[-1]["status"], trials[-1]["reason"] = "scheduled", None
    cid = make_campaign(engine, trials, state="running")
    view = ro()
    reads = row_reads(view)

    counts: list[int] = []

    def counted(change=None):
        def run() -> None:
            counts.append(len(reads))
            if change is not None:
                change()

        return run

    def head_stays() -> None:
        pk = repository.trials_in_order(engine, cid)[-1].id
        assert repository.mark_not_attempted(engine, pk, "spend_limit")

    def head_moves() -> None:
        amend_last(engine, cid)

    path = f"/api/campaigns/{cid}"
    bodies = [json.loads(text) for text in fetch_after(view, path, counted(), counted(head_stays), counted(head_moves), counted())]
    counts.append(len(reads))
    assert [b - a for a, b in zip(counts, counts[1:])] == [1, 1, 1, 0]
    verdicts = [(body["chain"]["problems"], body["report"]["integrity"]["chain_verified"]) for body in bodies]
    assert verdicts == [({}, True)] * 4
    assert bodies[0]["report"] != bodies[1]["report"] != bodies[2]["report"] and bodies[3] == bodies[2]


def test_requests_at_once_after_a_change_build_one_report(engine, ro):
    """Three requests for a campaign whose store just changed: one builds the report (one
    read of its rows), the others wait for it and serve it."""
    cid = make_campaign(engine)
    view = ro()
    reads = row_reads(view)

    def head_moves() -> None:
        amend_last(engine, cid)

    async def go() -> tuple[int, list[str]]:
        async with TestClient(TestServer(build_app(view))) as client:
            assert (await client.get(f"/campaigns/{cid}")).status == 200
            await asyncio.get_running_loop().run_in_executor(None, head_moves)
            before = len(reads)
            replies = await asyncio.gather(*(client.get(f"/api/campaigns/{cid}") for _ in range(3)))
            return len(reads) - before, [await r.text() for r in replies]

    read_once, bodies = asyncio.run(go())
    assert read_once == 1
    assert len(set(bodies)) == 1 and json.loads(bodies[0])["report"]["trials"][-1]["teardown_outcome"] == "recovered"


class Gated:
    """A report build that waits until the test opens its gate (the real build then runs)
    and counts how often it was started; ``fail`` makes the next one raise instead."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.started = 0
        self.fail: Exception | None = None

    def __call__(self, *args):
        self.started += 1
        assert self.gate.wait(30), "the test never opened the gate"
        failure, self.fail = self.fail, None
        if failure is not None:
            raise failure
        return snapshot._built(*args)


def test_a_patient_reader_gets_the_older_report_while_the_newer_one_builds(engine, ro):
    """On a big store a page must not wait seconds for each move of the head: with
    patience, the kept report is served, marked older, while one build of the store as it
    is now runs; a reader without patience (the JSON endpoint) waits for that build."""
    cid = make_campaign(engine, state="running")
    view, checks, build = ro(), ChainChecks(), Gated()
    reports = snapshot.Reports(build=build)
    first, building = reports.get(view, checks, cid, patience=0)  # nothing kept: it waits
    assert building is None and first.report["trials"][-1]["teardown_outcome"] != "recovered"

    build.gate.clear()
    amend_last(engine, cid)
    older, building = reports.get(view, checks, cid, patience=0)
    again, building_again = reports.get(view, checks, cid, patience=0)
    assert older is first and again is first
    assert building == building_again == Building(report_rows=8, store_rows=8)
    assert build.started == 2  # the second request joined the build the first started

    build.gate.set()
    newer, building = reports.get(view, checks, cid)
    assert building is None and newer is not first and build.started == 2
    assert newer.report["trials"][-1]["teardown_outcome"] == "recovered"
    assert newer.verdict(cid) == ChainVerdict(8, ())
    assert reports.get(view, checks, cid, patience=0) == (newer, None)


def test_a_failed_build_reaches_its_readers_and_the_next_one_builds_again(engine, ro):
    cid = make_campaign(engine)
    view, checks, build = ro(), ChainChecks(), Gated()
    reports = snapshot.Reports(build=build)
    build.fail = OSError("the disk went away")
    with pytest.raises(OSError, match="the disk went away"):
        reports.get(view, checks, cid, patience=0)
    built, building = reports.get(view, checks, cid, patience=0)
    assert building is None and build.started == 2 and built.report["campaign"]["id"] == cid


def test_a_page_says_its_report_is_older_and_reloads_until_the_newer_one_is_shown(engine, ro):
    cid = make_campaign(engine)  # completed: only an older report makes its page poll
    view, build = ro(), Gated()
    reports = snapshot.Reports(build=build)

    def slower_last() -> None:
        """The engine amends the last row with a wall time the page shows."""
        last = max(repository.attempts_for(engine, cid), key=lambda a: a.seq)
        chain.amend_tail(engine, last.id, wall_seconds=4242.0)

    async def go() -> list[str]:
        async with TestClient(TestServer(build_app(view, report_patience=0, reports=reports))) as client:
            texts = [await (await client.get(f"/campaigns/{cid}")).text()]
            build.gate.clear()
            await asyncio.get_running_loop().run_in_executor(None, slower_last)
            texts.append(await (await client.get(f"/campaigns/{cid}")).text())
            texts.append(await (await client.get(f"/api/campaigns/{cid}/status")).text())
            # The JSON endpoint has no patience: it waits for the report of the store as it is.
            build.gate.set()
            texts.append(await (await client.get(f"/api/campaigns/{cid}")).text())
            texts.append(await (await client.get(f"/campaigns/{cid}")).text())
            return texts

    current, older, status, body, newer = asyncio.run(go())
    assert 'id="building"' not in current and "data-refresh-url" not in current
    assert 'id="building"' in older and "The store changed since this report was built (from 8 attempt rows; 8 now)" in older
    assert 'id="live"' not in older  # not running: the banner says why it reloads
    match = re.search(r'data-refresh-url="([^"]+)" data-fingerprint="([^"]+)"', older)
    assert match and match.group(1) == f"/api/campaigns/{cid}/status"
    assert json.loads(status)["fingerprint"] != html.unescape(match.group(2))  # so it reloads at the next poll
    assert json.loads(body)["report"]["trials"][-1]["wall_seconds"] == 4242.0
    assert 'id="building"' not in newer and "data-refresh-url" not in newer
    assert 'data-field="wall_seconds">4242.000<' in newer and "4242" not in older


# --- read-only, loopback-only ------------------------------------------------------------


def test_the_view_engine_cannot_write_and_the_app_answers_only_get(engine, ro, db_path):
    cid = make_campaign(engine)
    engine.dispose()
    before = db_path.read_bytes()
    view = ro()
    with pytest.raises(DBAPIError):
        with view.begin() as conn:
            conn.execute(update(Campaign).where(Campaign.id == cid).values(state="stopped"))
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        for reply in fetch(view, "/", f"/campaigns/{cid}", f"/api/campaigns/{cid}", method=method):
            assert reply.status == 405
    view.dispose()
    assert db_path.read_bytes() == before


def test_a_non_loopback_host_header_is_refused_unless_remote_was_allowed(engine, ro):
    make_campaign(engine)
    view = ro()
    (refused,) = fetch(view, "/", headers={"Host": "attacker.example:80"})
    assert refused.status == 403
    (served,) = fetch(view, "/", headers={"Host": "attacker.example:80"}, allow_remote=True)
    assert served.status == 200
    (ok,) = fetch(view, "/")
    assert "default-src 'none'" in ok.headers["Content-Security-Policy"] and ok.headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize(
    "host, status",
    [
        ("localhost", 200), ("LOCALHOST:8080", 200), ("127.0.0.1:80", 200), ("127.9.9.9", 200), ("[::1]:443", 200),
        ("a:b", 403), ("::ffff:127.0.0.1", 403), ("::1", 403), ("evil.example#@127.0.0.1", 403), ("127.0.0.1@evil.example", 403),
        ("localhost.", 403), ("127.0.0.1:80:80", 403), ("[::1", 403), ("127.1", 403), ("", 403),
    ],
)  # fmt: skip
def test_the_host_header_is_read_whole_and_refused_unless_it_names_this_machine(engine, ro, host, status):
    """Refused with the view's own 403 and its security headers, never a server error:
    nothing a URL parser reads another way gets through."""
    make_campaign(engine)
    (reply,) = fetch(ro(), "/", headers={"Host": host})
    assert reply.status == status
    assert "default-src 'none'" in reply.headers["Content-Security-Policy"]


def test_a_campaign_id_is_ascii_digits(engine, ro):
    cid = make_campaign(engine)
    view = ro()
    arabic = "".join(chr(0x0660 + int(d)) for d in str(cid))
    assert [r.status for r in fetch(view, f"/campaigns/{cid}", f"/campaigns/{arabic}", f"/api/campaigns/{arabic}")] == [200, 404, 404]


def test_a_served_store_is_unchanged_and_ctrl_c_exits_130(engine, db_path):
    cid = make_campaign(engine)
    engine.dispose()
    before = (hashlib.sha256(db_path.read_bytes()).hexdigest(), db_path.stat().st_mtime_ns)
    proc = subprocess.Popen(
        [sys.executable, "-m", "campaign", "view", "--db", str(db_path), "--campaign", str(cid)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline().rstrip("\n")
        match = URL_LINE.match(line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        url = match.group(1)
        assert url.endswith(f"/campaigns/{cid}")
        base = url.split("/campaigns/")[0]
        for path in ("/", f"/campaigns/{cid}", f"/api/campaigns/{cid}", "/api/campaigns"):
            with urllib.request.urlopen(base + path, timeout=30) as response:
                assert response.status == 200
        request = urllib.request.Request(base + f"/api/campaigns/{cid}", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 405
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert (hashlib.sha256(db_path.read_bytes()).hexdigest(), db_path.stat().st_mtime_ns) == before
    assert [p.name for p in db_path.parent.iterdir()] == [db_path.name]  # no -wal or -shm left beside it


@contextlib.contextmanager
def _served(db_path, *extra: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """`campaign view` as a real process, its base URL; stopped by SIGTERM at the end."""
    proc = subprocess.Popen([sys.executable, "-m", "campaign", "view", "--db", str(db_path), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        match = URL_LINE.match(proc.stdout.readline().rstrip("\n"))
        assert match, proc.stderr.read() if proc.poll() is not None else ""
        yield proc, match.group(1).rstrip("/")
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_allow_remote_on_a_loopback_bind_keeps_the_host_check(engine, db_path):
    # --allow-remote dropped the check against DNS rebinding even on 127.0.0.1, where it
    # opens nothing: a page of attacker.example resolving to 127.0.0.1 could read the report.
    make_campaign(engine)
    engine.dispose()
    with _served(db_path, "--allow-remote") as (_, base):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(base + "/api/campaigns", headers={"Host": "attacker.example"}), timeout=30)
        assert refused.value.code == 403
        with urllib.request.urlopen(base + "/api/campaigns", timeout=30) as response:
            assert response.status == 200


def test_sigterm_stops_it_too(engine, db_path):
    make_campaign(engine)
    engine.dispose()
    with _served(db_path) as (proc, _):
        pass
    assert proc.returncode == 130


# --- PostgreSQL: the session itself is read-only ------------------------------------------


def test_postgres_view_reads_and_cannot_write(postgres_url):
    writable = open_store(postgres_url)
    try:
        cid = make_campaign(writable)
    finally:
        writable.dispose()
    view = open_readonly(postgres_url)
    try:
        text = page(view, f"/campaigns/{cid}")
        assert 'id="chain-ok"' in text and cells(text)[("coding", "attempts")][0] == 4
        with pytest.raises(DBAPIError, match="read-only transaction"):
            with view.begin() as conn:
                conn.execute(update(Campaign).where(Campaign.id == cid).values(state="stopped"))
    finally:
        view.dispose()


def test_every_store_open_is_read_only_for_sqlite(engine, db_url):
    make_campaign(engine)
    view = open_readonly(db_url)
    try:
        with view.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA query_only").scalar() == 1
    finally:
        view.dispose()


def test_the_summary_names_the_task_suite():
    summary = CampaignSummary(id=1, kind="campaign", state="completed", stop_reason=None, finished=2, scheduled=2)
    report = {
        "experiment": {"task_suite": {"name": "engine-example", "digest": "0" * 64, "unchecked_tasks": []}},
        "completion": {"attempted": 2, "not_attempted": 0, "not_attempted_by_reason": {}, "attempts_by_status": {}},
        "evidence": "synthetic",
    }
    assert "task suite engine-example" in summary_section(summary, report)
    report["experiment"]["task_suite"] = None
    assert "the built-in benchmark" in summary_section(summary, report)


# --- the trial table: filtered and paged on the server ------------------------------------


def test_trial_table_is_filtered_and_paged_on_the_server(engine, ro, monkeypatch):
    from campaign.view import trials

    monkeypatch.setattr(trials, "PAGE_ROWS", 2)
    cid = make_campaign(engine, paired_trials(["alpha", "beta", "gamma"], 2, lambda task, rep, variant: full_attempt(verified_pass=variant == "coding")))
    view = ro()
    first, second, past, junk = fetch(
        view,
        f"/campaigns/{cid}",
        f"/campaigns/{cid}?variant=coding&page=2",
        f"/campaigns/{cid}?variant=coding&page=99",
        f"/campaigns/{cid}?variant=%3Cscript%3Ex&outcome=nope&page=-1",
    )
    assert re.findall(r'<tr data-trial="([^"]+)"', first.text) == ["alpha/r1/baseline", "alpha/r1/coding"]
    assert "12 of 12 trials match; rows 1–2 shown (page 1 of 6)" in first.text
    # The filter applies before paging: page 2 of the coding trials, in schedule order.
    assert re.findall(r'<tr data-trial="([^"]+)"', second.text) == ["gamma/r1/coding", "alpha/r2/coding"]
    assert "6 of 12 trials match; rows 3–4 shown (page 2 of 3)" in second.text
    assert '<option value="coding" selected>coding</option>' in second.text
    # Pager links keep the filter.
    assert 'href="?variant=coding&amp;page=3" rel="next"' in second.text and 'href="?variant=coding" ' in second.text
    # Past the end is the last page.
    assert re.findall(r'<tr data-trial="([^"]+)"', past.text) == ["beta/r2/coding", "gamma/r2/coding"]
    # Values the table does not hold, and a page that is not a number, are ignored; never echoed.
    assert "12 of 12 trials match; rows 1–2 shown (page 1 of 6)" in junk.text
    assert "<script" not in junk.text.replace('<script src="/static/view.js" defer></script>', "") and "nope" not in junk.text


def test_trial_table_in_one_page_keeps_the_short_count(engine, ro):
    cid = make_campaign(engine)
    (reply,) = fetch(ro(), f"/campaigns/{cid}?outcome=passed")
    shown = re.findall(r'<tr data-trial="[^"]+" data-variant="\w+" data-outcome="(\w+)"', reply.text)
    assert shown and set(shown) == {"passed"}
    assert f">{len(shown)} of 8 trials shown<" in reply.text
    assert 'class="pager"' not in reply.text


def test_a_refresh_serves_the_kept_report_until_the_store_changes(engine, ro):
    """The report is rebuilt only when what it is built from changes (``Reports``)."""
    trials = paired_trials(["alpha"], 2, lambda task, rep, variant: full_attempt() if rep == 1 else None)
    trials[-1]["status"], trials[-1]["reason"] = "scheduled", None
    cid = make_campaign(engine, trials, state="running")
    view = ro()

    def edited_outside() -> None:
        # Not a change the engine makes (no trial's status or time moves): the kept
        # report is served, as the chain check's caveat says.
        with engine.begin() as conn:
            conn.execute(update(Campaign).where(Campaign.id == cid).values(runner_pid=4242))
            conn.exec_driver_sql("UPDATE trials SET task = 'renamed' WHERE campaign_id = ? AND position = 0", (cid,))

    def engine_change() -> None:
        pk = repository.trials_in_order(engine, cid)[-1].id
        assert repository.mark_not_attempted(engine, pk, "spend_limit")

    before, edited, changed = fetch_after(view, f"/campaigns/{cid}", None, edited_outside, engine_change)
    assert "alpha/r2/coding" in before and "not_reached" in before
    assert edited == before
    assert "spend_limit: spend limit reached" in changed and "renamed" in changed
