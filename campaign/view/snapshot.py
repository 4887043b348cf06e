"""One read of everything a page shows, gathered in a worker thread (blocking I/O).

A campaign snapshot is the campaigns-list summary, the chain verdict, the
spend limits the run recorded and the sanitized report; every page and JSON answer is rendered
from a snapshot and nothing else, so what the HTML and the JSON endpoint show
is the same allowlisted data.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Engine

from campaign.errors import UsageProblem
from campaign.report import Integrity, PlanOnlyArtifact, build_report
from campaign.store import repository
from campaign.store.limits import SpendLimits
from campaign.view import model, source
from campaign.view.model import Building, ProviderProgress
from campaign.view.source import CampaignSummary, ChainVerdict

# Each campaign's chain head (``chain.head``) by campaign id.
Heads = dict[int, tuple[Any, ...]]

# Why a campaign has no report page, in code-authored words (never the exception's text).
NO_REPORT = {
    "plan_only": "This campaign is plan-only (planned, or never live and never attempted): a plan template is not a live result, so there is no report to show.",
    "nonpaired": "This is a nonpaired run: one unpaired trial per task, not a paired experiment, so it has no paired report (`campaign coding` wrote its own).",
}


@dataclass(frozen=True)
class CampaignSnapshot:
    summary: CampaignSummary
    verdict: ChainVerdict
    # None: the run recorded no spend limits.
    limits: SpendLimits | None
    # The sanitized report (build_report's return value); None with ``no_report`` saying why.
    report: dict[str, Any] | None
    no_report: str | None
    providers: tuple[ProviderProgress, ...]
    # Not None: the report is of an earlier state of the store, and a newer one is being built.
    building: Building | None = None

    @property
    def total_cap_usd(self) -> float | None:
        """The cap over the whole run (the paired lane's approved maximum, or a campaign's
        ``--max-total-spend-usd``); None: no such cap."""
        return model.usd_float(self.limits.max_spend_usd) if self.limits is not None else None

    def as_json(self) -> dict[str, Any]:
        return {
            "campaign": self.summary.as_dict(),
            "fingerprint": self.summary.fingerprint(),
            "chain": self.verdict.as_dict(),
            "spend_cap_usd": self.total_cap_usd,
            "providers": [p.as_dict() for p in self.providers],
            "no_report": self.no_report,
            "report": self.report,
        }

    def json_bytes(self) -> bytes:
        """``as_json`` encoded. The sanitized report by orjson: 0.3 s for 100,000 trials where
        json takes 1.2 to 2.9, and its numbers are finite (the allowlist nulls any other);
        the page's own figures by json, which refuses a NaN rather than send it."""
        figures = self.as_json()
        report = figures.pop("report")
        return json.dumps(figures, allow_nan=False)[:-1].encode() + b', "report": ' + orjson.dumps(report) + b"}"


@dataclass(frozen=True)
class ListSnapshot:
    campaigns: tuple[CampaignSummary, ...]
    verdict: ChainVerdict

    @property
    def running(self) -> bool:
        return any(c.state == "running" for c in self.campaigns)

    def fingerprint(self) -> str:
        return ";".join(f"{c.id}={c.fingerprint()}" for c in self.campaigns)

    def as_json(self) -> dict[str, Any]:
        return {"campaigns": [c.as_dict() for c in self.campaigns], "chain": self.verdict.as_dict(), "fingerprint": self.fingerprint()}


def list_snapshot(engine: Engine, checks: source.ChainChecks) -> ListSnapshot:
    return ListSnapshot(tuple(source.list_campaigns(engine)), source.verify(engine, checks))


@dataclass(frozen=True)
class Built:
    """A report, the summary of the store it was built from (``repository.report_inputs``),
    and the chain check it states."""

    inputs: tuple[Any, ...]
    report: dict[str, Any]
    integrity: Integrity

    @property
    def heads(self) -> Heads:
        return repository.input_heads(self.inputs)

    def verdict(self, campaign_id: int) -> ChainVerdict:
        """The campaign's chain verdict as this report's check found it, at its heads."""
        return source.verdict(self.heads[campaign_id][0], (p for p in self.integrity.problems if p.campaign_id == campaign_id))


@dataclass(frozen=True)
class _Job:
    inputs: tuple[Any, ...]
    done: Future[Built]


class Reports:
    """The last few campaigns' reports, each kept until what it is built from changes.

    Building the report of a 100,000-attempt campaign reads every attempt row and takes
    seconds; a page refresh while nothing changed must not. ``repository.report_inputs``
    summarizes everything a report reads (the campaign, its trials' statuses, its
    chain head and running attempts, and those of the campaigns it continues): the
    kept report is served while that summary is unchanged. The summary is read before
    the report is built, so a kept report is never older than its summary says.

    One campaign's report is built by one thread at a time: requests that arrive while
    it runs wait for it, and serve what it built unless the store changed meanwhile. Six
    requests at once would otherwise build six copies of a few hundred MB each.

    A caller with ``patience`` (the view's pages) waits that long for a newer report
    when an older one is kept, and then gets the older one, marked not current, while
    the newer one is still built: on a running 100,000-attempt campaign the head moves
    with every attempt, and a page must not wait seconds for each. ``build`` stands in
    for the report's build in tests."""

    KEEP = 2  # a 100,000-trial report is a few hundred MB of Python values

    def __init__(self, build: Callable[[Engine, source.ChainChecks, int, Heads], tuple[dict[str, Any], Integrity]] | None = None) -> None:
        self._build = build or _built
        self._kept: OrderedDict[int, Built] = OrderedDict()
        self._jobs: dict[int, _Job] = {}
        self._lock = threading.Lock()

    def get(self, engine: Engine, checks: source.ChainChecks, campaign_id: int, patience: float | None = None) -> tuple[Built, Building | None]:
        """The campaign's report, and None when it is of the store as it is now; else
        what the store holds now, a newer report being built (raises what ``build_report``
        raises). ``patience``: seconds to wait for the newer report when an older one is
        kept (None: until it is built)."""
        deadline = None if patience is None else time.monotonic() + patience
        while True:
            inputs = repository.report_inputs(engine, campaign_id)
            with self._lock:
                kept = self._kept.get(campaign_id)
                if kept is not None and kept.inputs == inputs:
                    self._kept.move_to_end(campaign_id)
                    return kept, None
                job = self._jobs.get(campaign_id) or self._start(engine, checks, campaign_id, inputs)
            try:
                built = job.done.result(timeout=None if kept is None or deadline is None else max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                assert kept is not None
                return kept, Building(kept.heads[campaign_id][0], repository.input_heads(inputs)[campaign_id][0])
            if built.inputs == inputs:
                return built, None
            # It was building an older state of the store: look again.

    def _start(self, engine: Engine, checks: source.ChainChecks, campaign_id: int, inputs: tuple[Any, ...]) -> _Job:
        """A build of the store as ``inputs`` summarize it (or newer), in a thread of its own
        that outlives the request that started it (held: ``self._lock``)."""
        job = _Job(inputs, Future())
        self._jobs[campaign_id] = job
        threading.Thread(target=self._run, args=(job, engine, checks, campaign_id), name=f"campaign-report-{campaign_id}", daemon=True).start()
        return job

    def _run(self, job: _Job, engine: Engine, checks: source.ChainChecks, campaign_id: int) -> None:
        try:
            report, integrity = self._build(engine, checks, campaign_id, repository.input_heads(job.inputs))
        except BaseException as exc:  # handed to every request waiting for it
            with self._lock:
                del self._jobs[campaign_id]
            job.done.set_exception(exc)
            return
        built = Built(job.inputs, report, integrity)
        with self._lock:
            del self._jobs[campaign_id]
            self._kept[campaign_id] = built
            self._kept.move_to_end(campaign_id)
            while len(self._kept) > self.KEEP:
                self._kept.popitem(last=False)
        job.done.set_result(built)


def _built(engine: Engine, checks: source.ChainChecks, campaign_id: int, heads: Heads) -> tuple[dict[str, Any], Integrity]:
    """The report and its chain check: the kept verification when every campaign's head
    is where it was verified and settled (``ChainChecks.known``); else the report's own check of the rows it reads anyway
    (one read of 100,000 rows, not two), which ``checks`` keeps for the heads read before it."""
    known = checks.known(heads)
    if known is not None:
        return build_report(engine, campaign_id, integrity=known), known
    found: list[Integrity] = []

    def checked(integrity: Integrity) -> None:
        found.append(integrity)
        checks.record(heads, integrity)

    report = build_report(engine, campaign_id, on_checked=checked)
    return report, found[0]


def campaign_snapshot(engine: Engine, checks: source.ChainChecks, campaign_id: int, reports: Reports | None = None, patience: float | None = None) -> CampaignSnapshot:
    """Raises UsageProblem when the store has no such campaign. ``reports`` keeps built
    reports between calls (None: build one now); ``patience`` is how long to wait for a
    newer report when ``reports`` keeps an older one (``Reports.get``)."""
    summary = source.get_summary(engine, campaign_id)
    limits = repository.spend_limits(engine, campaign_id)
    built: Built | None = None
    building: Building | None = None
    why: str | None = None
    if summary.kind == "nonpaired":
        why = "nonpaired"
    else:
        try:
            built, building = (reports or Reports()).get(engine, checks, campaign_id, patience)
        except PlanOnlyArtifact:
            why = "plan_only"
        except UsageProblem:
            # build_report refuses only what it cannot report as paired evidence.
            why = "nonpaired"
    # A report states the chain check of the rows it was built from: the page shows that
    # verdict, so the chain is not read a second time (nor its head).
    verdict = built.verdict(campaign_id) if built is not None else source.verify(engine, checks, campaign_id)
    report = built.report if built is not None else None
    providers = tuple(model.provider_progress(report, limits)) if report is not None else ()
    return CampaignSnapshot(summary, verdict, limits, report, why, providers, building)


def status(engine: Engine, campaign_id: int) -> dict[str, Any]:
    """The small answer the auto-refresh polls: the summary and its fingerprint."""
    summary = source.get_summary(engine, campaign_id)
    return {"campaign": summary.as_dict(), "fingerprint": summary.fingerprint()}
