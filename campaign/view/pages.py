"""The HTML pages, built from small functions that escape every value they insert.

Nothing here reads the store: the campaign page is rendered from the sanitized
report (plus the campaigns-list summary and the chain verdict), the list page
from allowlisted summaries. ``h`` escapes text and attribute values alike;
the only unescaped markup is this module's own and the forest plot, which
``campaign.report.forest.render_svg`` renders from the same sanitized report
with its own escaping. No inline script or style: the Content-Security-Policy
the app sends allows only ``/static/``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from campaign.progress import format_spend
from campaign.report import detectable, differences
from campaign.report.forest import render_svg
from campaign.report.differences import wall_only_exploratory
from campaign.report.markdown import offline_ran, without_result_by_reason
from campaign.view import model, trials
from campaign.view.html import el, fmt, h, json_attr, text
from campaign.view.model import Building, ProviderProgress, null_reason, unknown_of
from campaign.view.source import CampaignSummary, ChainVerdict
from campaign.vocabulary import PROVIDER_FAULT_WORDS

REFRESH_SECONDS = 3


# --- layout ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Refresh:
    """Poll ``url`` and reload when its fingerprint differs from ``fingerprint``."""

    url: str
    fingerprint: str


def layout(title: str, body: str, refresh: Refresh | None = None) -> str:
    head = "".join(
        [
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="referrer" content="no-referrer">',
            text("title", title),
            '<link rel="stylesheet" href="/static/view.css">',
            '<script src="/static/view.js" defer></script>',
        ]
    )
    nav = el("header", el("nav", el("a", "campaigns", href="/") + text("span", " · read-only view of the store", class_="muted")))
    body_attrs = {"data_refresh_url": refresh.url, "data_fingerprint": refresh.fingerprint, "data_refresh_seconds": REFRESH_SECONDS} if refresh else {}
    return "<!doctype html>\n" + el("html", el("head", head) + el("body", nav + el("main", body), **body_attrs), lang="en") + "\n"


def chain_banner(verdict: ChainVerdict, scope: str) -> str:
    """A visible warning when `campaign verify` fails; a quiet line when the chain is intact."""
    if verdict.intact:
        return text(
            "p",
            f"Hash chain intact: {verdict.rows} attempt rows verified ({scope}), with the trials and experiment they pin; "
            "a campaign's state, stop reason and spend limits are not in the chain.",
            class_="chain-ok",
            id="chain-ok",
        )
    kinds = ", ".join(f"{kind} ×{count}" for kind, count in verdict.by_kind().items())
    seqs = sorted({s for _, s in verdict.problems if s is not None})
    where = f" at seq {', '.join(str(s) for s in seqs[:20])}{' …' if len(seqs) > 20 else ''}" if seqs else ""
    message = (
        f"Hash chain verification FAILED ({scope}): {len(verdict.problems)} problem(s) in {verdict.rows} attempt rows: {kinds}{where}. "
        "Attempt rows were changed outside the engine; these figures cannot be trusted. Do not resume this store; "
        "keep it and its backups as evidence and run `campaign verify` for details."
    )
    return text("div", message, class_="banner warning", id="chain-warning", role="alert")


def error_page(status: int, message: str) -> str:
    return layout(f"{status}", text("h1", f"{status}") + text("p", message))


# --- the campaigns list ----------------------------------------------------------------


def progress_cell(finished: int, scheduled: int) -> str:
    bar = el("progress", "", value=finished, max=max(scheduled, 1))
    return el("td", bar + text("span", f" {finished}/{scheduled}"), data_field="progress", data_value=f"{finished}/{scheduled}")


def list_page(campaigns: Sequence[CampaignSummary], verdict: ChainVerdict, refresh: Refresh | None) -> str:
    header = "".join(text("th", c) for c in ("campaign", "kind", "state", "stop reason", "progress (finished/scheduled)"))
    rows = []
    for c in campaigns:
        rows.append(
            el(
                "tr",
                el("td", el("a", h(c.id), href=f"/campaigns/{c.id}"))
                + text("td", c.kind, data_field="kind")
                + text("td", c.state, data_field="state", class_=f"state-{c.state}")
                + text("td", c.stop_reason or "none", data_field="stop_reason")
                + progress_cell(c.finished, c.scheduled),
                data_campaign=c.id,
            )
        )
    table = el("table", el("thead", el("tr", header)) + el("tbody", "".join(rows)), id="campaigns") if rows else text("p", "The store holds no campaign yet.")
    note = text("p", f"Refreshing every {REFRESH_SECONDS} s while a campaign runs.", class_="muted") if refresh else ""
    return layout("campaigns", chain_banner(verdict, "whole store") + text("h1", "Campaigns") + note + table, refresh)


# --- one campaign -------------------------------------------------------------------------


def campaign_page(
    summary: CampaignSummary,
    verdict: ChainVerdict,
    report: Mapping[str, Any] | None,
    providers: Sequence[ProviderProgress],
    total_cap: float | None,
    refresh: Refresh | None,
    no_report: str | None = None,
    query: trials.TrialQuery = trials.ALL,
    building: Building | None = None,
) -> str:
    title = f"campaign {summary.id}"
    scope = title if building is None else f"{title}, as the report below was built"
    parts = [chain_banner(verdict, scope), text("h1", f"Campaign {summary.id}")]
    if refresh and summary.state == "running":
        parts.append(text("p", f"Running: this page refreshes itself every {REFRESH_SECONDS} s while the campaign runs.", class_="banner live", id="live"))
    if building is not None:
        parts.append(
            text(
                "p",
                f"The store changed since this report was built (from {building.report_rows} attempt rows; {building.store_rows} now). "
                "A report of the store as it is now is being built: this page reloads when it is ready.",
                class_="banner live",
                id="building",
            )
        )
    parts.append(summary_section(summary, report))
    if report is None:
        parts.append(text("p", no_report or "No report for this campaign.", class_="banner", id="no-report"))
        return layout(title, "".join(parts), refresh)
    if report["synthetic"]:
        who = "the offline agent" if offline_ran(report) else "a route with synthetic prices (a simulated or replayed provider)"
        parts.append(text("p", f"Synthetic figures: {who} produced these numbers; they exercise the engine, not any model.", class_="banner synthetic"))
    parts += [
        providers_section(providers, total_cap),
        variants_section(report["variants"] or []),
        faults_section(report.get("provider_faults") or []),
        differences_section(report["paired_differences"]),
        el("section", text("h2", "Forest plot") + el("div", render_svg(dict(report)), id="forest", class_="plot")),
        trials.section(trials.trial_page(report, query)),
    ]
    return layout(title, "".join(parts), refresh)


def summary_section(summary: CampaignSummary, report: Mapping[str, Any] | None) -> str:
    items = [
        ("kind", summary.kind),
        ("state", summary.state),
        ("stop reason", summary.stop_reason or "none"),
        ("progress", f"{summary.finished}/{summary.scheduled} trials finished"),
    ]
    if report is not None:
        done = report["completion"]
        suite = report["experiment"]["task_suite"]
        items += [
            ("tasks", f"task suite {suite['name']}" if suite else "the built-in benchmark"),
            ("evidence", report["evidence"]),
            ("attempted", done["attempted"]),
            ("not attempted", done["not_attempted"]),
            # Reports written before counted both kinds of trial without a result as not attempted.
            *((("attempted, without a result", done["attempted_without_result"]),) if done.get("attempted_without_result") is not None else ()),
        ]
        items += [(f"without a result: {reason}", count) for reason, count in (without_result_by_reason(done) or {}).items()]
        items += [(f"attempts {status}", count) for status, count in (done["attempts_by_status"] or {}).items()]
    body = "".join(text("dt", k) + text("dd", v) for k, v in items)
    return el("section", text("h2", "Summary") + el("dl", body, class_="summary"), id="summary")


def spend_text(spent: float | None, unknown: int, cap: float | None) -> str:
    """``$0.1200/no cap``, ``$0.1200+?/$5.00 (unknown: 2 attempts did not report it)``."""
    shown = format_spend(spent, partial=unknown > 0, cap=cap)
    return f"{shown} ({unknown_of(unknown)})" if unknown else shown


def providers_section(providers: Sequence[ProviderProgress], total_cap: float | None) -> str:
    head = "".join(text("th", c) for c in ("provider", "progress (attempted/scheduled)", "not attempted", "verified passes", "measured spend / cap"))
    rows = "".join(
        el(
            "tr",
            text("td", p.provider)
            + progress_cell(p.attempted, p.scheduled)
            + text("td", p.not_attempted)
            + text("td", p.passed)
            + text("td", spend_text(p.spend_usd, p.spend_unknown, p.cap_usd), data_field="spend"),
            data_provider=p.provider,
        )
        for p in providers
    )
    spent, unknown = model.total_spend(providers)
    total = text("p", f"All providers: {spend_text(spent, unknown, total_cap)}.", id="total-spend")
    table = el("table", el("thead", el("tr", head)) + el("tbody", rows), id="providers")
    return el("section", text("h2", "Progress per provider") + table + total)


# (report field, label, format kind, words for a null value)
Reason = Callable[[Mapping[str, Any]], str]


def _status_words(key: str) -> Reason:
    return lambda v: model.SPEND_STATUS_WORDS.get(v[key], v[key] or "unknown")


def _reason(key: str) -> Reason:
    return lambda v: null_reason(v[key])


def _no_attempts_or_unknown(known_key: str | None) -> Reason:
    def words(v: Mapping[str, Any]) -> str:
        if not v["attempts"]:
            return "no attempts yet"
        known = v[known_key] if known_key else 0
        return unknown_of(v["attempts"] - known)

    return words


VARIANT_FIELDS: tuple[tuple[str, str, str, Reason | None], ...] = (
    ("attempts", "attempts", "int", None),
    ("provider_error_attempts", "attempts the provider ended (no verdict)", "int", None),
    ("engine_error_attempts", "attempts the engine ended (no verdict)", "int", None),
    ("unfinished_attempts", "unfinished attempts", "int", None),
    ("successes", "verified successes", "int", None),
    ("success_rate", "success rate", "rate", _reason("success_rate_reason")),
    ("measured_spend_usd", "measured spend (USD)", "usd", _status_words("measured_spend_status")),
    ("attempts_with_cost", "attempts that reported cost", "int", None),
    ("spend_complete", "spend complete", "bool", lambda v: "no attempts yet"),
    ("cost_per_verified_success_usd", "cost per verified success (USD)", "usd", _reason("cost_per_verified_success_reason")),
    ("equivalent_spend_usd", "list-price equivalent, not billed (USD)", "usd", _status_words("equivalent_spend_status")),
    ("equivalent_cost_per_verified_success_usd", "equivalent cost per verified success (USD)", "usd", _reason("equivalent_cost_per_verified_success_reason")),
    ("wall_seconds_mean", "mean wall seconds", "seconds", _no_attempts_or_unknown("wall_seconds_measured")),
    ("wall_seconds_measured", "attempts with a wall time", "int", None),
    ("tool_error_recoveries", "tool-error recoveries", "int", _no_attempts_or_unknown("tool_error_recoveries_known")),
)


def variant_cell(v: Mapping[str, Any], field: str, kind: str, reason: Reason | None) -> str:
    value = v.get(field)
    if value is None:
        shown, cls = (reason(v) if reason else "unknown"), "null"
    else:
        shown, cls = fmt(value, kind), None
        if field == "measured_spend_usd" and v.get("measured_spend_status") == "partial":
            shown += f" + {unknown_of(v['attempts'] - v['attempts_with_cost'])}"
    return text("td", shown, data_variant=v["variant"], data_field=field, data_value=json_attr(value), class_=cls)


def variants_section(variants: Sequence[Mapping[str, Any]]) -> str:
    head = text("th", "") + "".join(text("th", v["variant"], data_variant=v["variant"]) for v in variants)
    rows = "".join(
        el("tr", text("th", label, scope="row") + "".join(variant_cell(v, field, kind, reason) for v in variants), data_field=field)
        for field, label, kind, reason in VARIANT_FIELDS
    )
    missing = [
        text("li", f"{v['variant']}: {words}: {unknown_of(count)}")
        for v in variants
        for words, count in model.missing_counters(v)
    ]
    notes = el("ul", "".join(missing), id="missing") if missing else text("p", "Every attempt reported every counter.", class_="muted")
    table = el("table", el("thead", el("tr", head)) + el("tbody", rows), id="variants")
    return el("section", text("h2", "Per variant (as in the report JSON)") + table + text("h3", "Unknown counters") + notes)


def faults_section(rows: Sequence[Mapping[str, Any]]) -> str:
    """Attempts the provider ended, per provider and variant, by the fault that ended them."""
    if not rows:
        return el("section", text("h2", "Provider faults") + text("p", "No attempt was ended by its provider.", class_="muted"), id="faults")
    head = "".join(text("th", c) for c in ("provider", "variant", "attempts the provider ended", "faults that ended them"))
    body = "".join(
        el(
            "tr",
            text("td", r["provider"])
            + text("td", r["variant"])
            + text("td", r["attempts"], data_field="attempts")
            + text("td", ", ".join(f"{PROVIDER_FAULT_WORDS.get(k, k)} x{n}" for k, n in (r["by_fault"] or {}).items())),
            data_provider=r["provider"],
            data_variant=r["variant"],
        )
        for r in rows
    )
    note = text("p", "No verdict: these attempts are left out of success and wall time, their trials ran again, their spend is counted.", class_="muted")
    return el("section", text("h2", "Provider faults") + el("table", el("thead", el("tr", head)) + el("tbody", body), id="provider-faults") + note, id="faults")


def differences_section(pd: Mapping[str, Any]) -> str:
    if "comparisons" not in pd:
        return el("section", text("h2", "Paired differences (task clusters)") + _comparison(pd, "coding minus baseline", "95%", ""))
    # An experiment of its own variants: each candidate against the baseline, adjusted.
    level = differences.level(pd)
    method = text(
        "p",
        f"Each candidate against the baseline {pd['baseline']}: {level} intervals (Bonferroni over {len(pd['comparisons'] or ())} candidates), "
        "so that all of them hold together at 95%.",
        class_="muted",
    )
    parts = [_comparison(view, label, level, f"-{i}") for i, (label, view) in enumerate(differences.views(pd))]
    return el("section", text("h2", "Paired differences (task clusters)") + method + "".join(parts))


def _comparison(pd: Mapping[str, Any], label: str, level: str, suffix: str) -> str:
    """One comparison's table and sentences; ``suffix`` keeps element ids unique on a page of several."""
    head = "".join(text("th", c) for c in (label, "estimate", f"{level} interval", "bootstrap 95% (spec)", "sign-flip p", "task clusters", "pairs"))
    rows = []
    for key, label in (("verified_success", "verified success"), ("wall_seconds", "wall seconds")):
        d = pd[key]
        boot = d.get("bootstrap_percentile_95") or {}
        estimate = fmt(d["estimate"], "signed") if d["estimate"] is not None else null_reason(d["estimate_reason"])
        p = d.get("sign_flip_p")
        rows.append(
            el(
                "tr",
                text("th", label, scope="row")
                + text("td", estimate, data_field="estimate", data_value=json_attr(d["estimate"]))
                + text("td", _interval(d), data_field="interval", data_value=json_attr([d["ci_low"], d["ci_high"]]))
                + text("td", _interval(boot), data_field="bootstrap", data_value=json_attr([boot.get("ci_low"), boot.get("ci_high")]))
                + text("td", f"{p:.3f}" if p is not None else "null", data_field="sign_flip_p", data_value=json_attr(p))
                + text("td", d["tasks"])
                + text("td", d["pairs"]),
                data_metric=key,
            )
        )
    few = "Exploratory (wall seconds): few task clusters have both wall times" if wall_only_exploratory(pd) else "Exploratory: few task clusters"
    note = text("p", f"{few}; not a global ranking.", class_="banner") if pd["exploratory"] else ""
    table = el("table", el("thead", el("tr", head)) + el("tbody", "".join(rows)), id=f"differences{suffix}")
    sentence = detectable.inconclusive(pd)
    found = text("p", detectable.detectable_line(pd), id=f"detectable{suffix}", data_value=json_attr(pd["detectable_effect"]["effect"]))
    verdict = text("p", f"Verified success is {sentence}.", class_="banner", id=f"inconclusive{suffix}") if sentence else ""
    method = text("p", f"The {level} interval is a t interval on the task means; the specification's percentile bootstrap is shown beside it.", class_="muted")
    return note + table + method + found + verdict


def _interval(d: Mapping[str, Any]) -> str:
    if d.get("ci_low") is not None and d.get("ci_high") is not None:
        return f"[{fmt(d['ci_low'], 'signed')}, {fmt(d['ci_high'], 'signed')}]"
    return null_reason(d.get("interval_reason"))
