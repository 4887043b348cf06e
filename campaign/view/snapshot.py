"""One read of everything a page shows, gathered in a worker thread (blocking I/O).

A campaign snapshot is the campaigns-list summary, the chain verdict, the
spend limits the run recorded and the sanitized report; every page and JSON answer is rendered
from a snapshot and nothing else, so what the HTML and the JSON endpoint show
is the same allowlisted data.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import Engine

from campaign.errors import UsageProblem
from campaign.report import PlanOnlyArtifact, build_report
from campaign.store import chain, repository
from campaign.store.limits import SpendLimits
from campaign.view import model, source
from campaign.view.model import ProviderProgress
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


class Reports:
    """The last few campaigns' reports, each kept until what it is built from changes.

    Building the report of a 100,000-attempt campaign reads every attempt row and takes
    seconds; a page refresh while nothing changed must not. ``repository.report_inputs``
    summarizes everything a report reads (the campaign, its trials' statuses, its
    chain head and running attempts, and those of the campaigns it continues): the
    kept report is served while that summary is unchanged. The summary is read before
    the report is built, so a kept report is never older than its summary says.

    One campaign's report is built by one request at a time: the others (a second tab,
    the JSON endpoint) wait for it and then read the summary again, so they serve what it
    built unless the store changed meanwhile. Six requests at once would otherwise build
    six copies of a few hundred MB each, every one slower for the others."""

    KEEP = 2  # a 100,000-trial report is a few hundred MB of Python values

    def __init__(self) -> None:
        self._kept: OrderedDict[int, tuple[tuple[Any, ...], dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[int, threading.Lock] = {}

    def get(self, engine: Engine, checks: source.ChainChecks, campaign_id: int) -> tuple[dict[str, Any], Heads]:
        """The campaign's report and the chain heads its inputs were read at (raises what
        ``build_report`` raises)."""
        with self._lock:
            building = self._building.setdefault(campaign_id, threading.Lock())
        with building:
            inputs = repository.report_inputs(engine, campaign_id)
            heads = repository.input_heads(inputs)
            with self._lock:
                kept = self._kept.get(campaign_id)
                if kept is not None and kept[0] == inputs:
                    self._kept.move_to_end(campaign_id)
                    return kept[1], heads
            report = _built(engine, checks, campaign_id, heads)
            with self._lock:
                self._kept[campaign_id] = (inputs, report)
                self._kept.move_to_end(campaign_id)
                while len(self._kept) > self.KEEP:
                    self._kept.popitem(last=False)
            return report, heads


def _built(engine: Engine, checks: source.ChainChecks, campaign_id: int, heads: Heads) -> dict[str, Any]:
    """The report, with the kept chain verification when every campaign's head is where it
    was verified; else with the report's own check of the rows it reads anyway (one read
    of 100,000 rows, not two), which ``checks`` keeps for the heads read before it."""
    known = checks.known(heads)
    if known is not None:
        return build_report(engine, campaign_id, integrity=known)
    return build_report(engine, campaign_id, on_checked=functools.partial(checks.record, heads))


def campaign_snapshot(engine: Engine, checks: source.ChainChecks, campaign_id: int, reports: Reports | None = None) -> CampaignSnapshot:
    """Raises UsageProblem when the store has no such campaign. ``reports`` keeps built
    reports between calls (None: build one now)."""
    summary = source.get_summary(engine, campaign_id)
    limits = repository.spend_limits(engine, campaign_id)
    report: dict[str, Any] | None = None
    heads: Heads = {}
    why: str | None = None
    if summary.kind == "nonpaired":
        why = "nonpaired"
    else:
        try:
            if reports is not None:
                report, heads = reports.get(engine, checks, campaign_id)
            else:
                heads = {cid: chain.head(engine, cid) for cid in repository.lineage(engine, campaign_id)}
                report = _built(engine, checks, campaign_id, heads)
        except PlanOnlyArtifact:
            why = "plan_only"
        except UsageProblem:
            # build_report refuses only what it cannot report as paired evidence.
            why = "nonpaired"
    # After the report: a report that verified the rows it read left its verdict in
    # ``checks``, so the chain is not read a second time for the page's verdict (nor
    # its head, when the report's inputs just read it).
    verdict = source.verify(engine, checks, campaign_id, heads.get(campaign_id))
    providers = tuple(model.provider_progress(report, limits)) if report is not None else ()
    return CampaignSnapshot(summary, verdict, limits, report, why, providers)


def status(engine: Engine, campaign_id: int) -> dict[str, Any]:
    """The small answer the auto-refresh polls: the summary and its fingerprint."""
    summary = source.get_summary(engine, campaign_id)
    return {"campaign": summary.as_dict(), "fingerprint": summary.fingerprint()}
