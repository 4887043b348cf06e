"""The Markdown summary: the sanitized report said in words (its paired differences in ``report.differences``).

Rendered from the sanitized report dictionary only (never from the store), so
it can show nothing the allowlist did not let through. Every sentence here is
code-authored; the only values interpolated are numbers, booleans, digests,
enum members and pattern-checked ids.
"""

from __future__ import annotations

from decimal import Decimal
from collections.abc import Mapping
from typing import Any

from campaign.report import differences, fingerprints, reasoning
from campaign.report.words import num, or_reason
from campaign.spend import ATTEMPT_EXCEEDED_CEILING
from campaign.vocabulary import COUNTER_WORDS, PROVIDER_FAULT_WORDS

_BASIS = {
    "synthetic_figures": "the figures are synthetic (offline agent), so they say nothing about any model",
    # A replayed or simulated route (synthetic prices) driven by a real client, no offline agent.
    "synthetic_route": "the figures are synthetic (a route with synthetic prices), so they say nothing about any model",
    "no_paired_evidence": "no pair has both variants attempted, so there is no paired evidence",
    "single_task_cluster": "only one task cluster has complete pairs, so there is no uncertainty interval",
    "exploratory_task_sample": "the task sample is small, so the result is exploratory",
    "no_spread_between_tasks": "every task cluster's mean difference is the same, so there is no interval to give; read the per-task table",
    "interval_includes_zero": "the 95% interval of the verified-success difference includes zero",
    "success_regression": "the verified-success difference is negative with an interval below zero",
    "measured_benefit_requires_review": (
        "the verified-success interval lies above zero; a promotion still needs a named profile, "
        "its success and security checks, and review of cache and pricing caveats"
    ),
}
_FACTORS = {
    "provider_cache_state": "Provider cache state: fresh local state is not a provider-cache flush; cold/warm regimes are unknown.",
    "provider_queue": "Provider queueing.",
    "provider_load": "Provider load.",
    "pricing_drift": "Pricing drift of the catalog behind runtime-reported cost.",
    "route_drift": "Provider route drift.",
    "os_scheduling": "Operating-system scheduling on the runner.",
    # The store records the experiment, not the base config's contents: say what was recorded.
    "reasoning_provider_default": (
        "Reasoning: the experiment records no reasoning setting, so it is reported as the provider default (recorded, not fixed); "
        "the provider's actual effort is not observed."
    ),
    "reasoning_configured_not_verified": "Reasoning: the experiment records a reasoning setting; the provider's actual effort is not observed.",
    # From the wire: what the requests asked for, not what the provider spent on reasoning.
    "reasoning_provider_default_on_wire": "Reasoning: no request of any variant asked for a reasoning setting (seen on the wire), so each ran at the provider's default; the provider's actual effort is not observed.",
    "reasoning_same_on_wire": "Reasoning: every variant's requests asked for the same reasoning settings (seen on the wire); the provider's actual effort is not observed.",
    "reasoning_differs_between_variants": (
        "Reasoning: the variants' requests asked for different reasoning settings (seen on the wire): unless reasoning is the treatment, "
        "the comparison is confounded by it."
    ),
    "reasoning_observed_for_some_variants": "Reasoning: the wire showed the reasoning settings of some variants' requests only; whether they were the same is unknown.",
}


def _reasoning_lines(report: Mapping[str, Any]) -> list[str]:
    """Each variant's reasoning settings as its requests asked for them, where the wire showed them."""
    observed = reasoning.by_variant([(t.get("variant"), t.get("schema_diagnostics")) for t in report.get("trials") or []])
    return [f"  - {variant}: {', '.join(f'`{s}`' for s in settings)}" for variant, settings in observed.items()]


def _without_result(done: dict[str, Any]) -> str:
    """Trials without a result: never attempted, and (reports from this version on) attempted
    and paid for but left without a verdict, counted apart."""
    paid = done.get("attempted_without_result")
    if paid is None:  # a report written before the two were counted apart
        return str(done["not_attempted"])
    return f"{done['not_attempted'] + paid} (never attempted: {done['not_attempted']}; attempted, paid for, without a verdict: {paid})"


def without_result_by_reason(done: Mapping[str, Any]) -> dict[str, int] | None:
    """Trials without a result, by reason (a report written before counted them all as not attempted)."""
    return done.get("without_result_by_reason", done.get("not_attempted_by_reason"))


def _usd(value: Any) -> str:
    return "null" if value is None else f"{value:.4f}"


def offline_ran(report: dict[str, Any]) -> bool:
    """The offline agent ran, or may have: it was the agent, the provider by its own name,
    or one of several agents (``custom``: the report does not say which provider had which).
    Else a synthetic report's figures came from a real client on a route with synthetic prices."""
    runtime = report["runtime"]
    return runtime["agent"] in ("offline", "custom") or "offline" in (runtime["providers"] or ())


def _decision_words(report: dict[str, Any]) -> str:
    basis = report["decision"]["basis"]
    return "synthetic_route" if basis == "synthetic_figures" and not offline_ran(report) else basis


def render_markdown(report: dict[str, Any], svg_name: str | None = None) -> str:
    c = report["campaign"]
    done = report["completion"]
    lines: list[str] = [f"# Paired disclosure report: campaign {c['id']}", ""]
    lines += _integrity_lines(report)
    if report["synthetic"]:
        who = (
            "The offline agent produced every number below."
            if offline_ran(report)
            else "A route with synthetic prices (a simulated or replayed provider, or the offline agent under another name) produced these numbers."
        )
        lines += [f"> **Synthetic figures.** {who} They exercise the engine, not any model; do not cite them as evidence.", ""]
    if report["evidence"] != "live":
        lines += ["> **No paid calls.** This campaign was not run live.", ""]
    lines += [
        f"Report `{report['kind']}`, schema version {report['schema_version']}, campaign kind `{c['kind']}`, state `{c['state']}`, "
        f"stop reason `{c['stop_reason'] or 'none'}`.",
        "",
    ]
    if report["scope"]["provider"]:
        lines += [f"Scope: provider `{report['scope']['provider']}` only.", ""]
    if c["continues_campaign_id"] is not None:
        lines += [
            f"This campaign continues campaign {c['continues_campaign_id']}, whose finalization blocked it: "
            f"{done['carried_trials']} trials carry that campaign's finished, verified results (linked, never copied or edited); "
            "the other trials ran here.",
            "",
        ]
    lines += [
        "## Completion",
        "",
        f"- Scheduled trials: {done['scheduled']}; with a result (a finished attempt): {done['attempted']}; without one: {_without_result(done)}.",
    ]
    for reason, count in (without_result_by_reason(done) or {}).items():
        lines.append(f"  - without a result, `{reason}`: {count}")
    if done["interrupted_attempts"]:
        # A trial its ceiling stopped is reopened only under a raised ceiling: say so only where there is one.
        ceiling = ATTEMPT_EXCEEDED_CEILING in (without_result_by_reason(done) or {})
        how = "stopped on request, at their spend ceiling, or left running by a killed runner" if ceiling else "stopped on request, or left running by a killed runner"
        rerun = f", except a trial recorded `{ATTEMPT_EXCEEDED_CEILING}`, which runs again only under a raised per-attempt ceiling" if ceiling else ""
        lines.append(
            f"- Interrupted attempts: {done['interrupted_attempts']} ({how}). "
            "They carry no verdict: they are not failures, are left out of success, wall time, counters and the paired differences, "
            f"and their trial gets a fresh attempt on resume{rerun}; their spend is counted."
        )
    if done["provider_error_attempts"] or done["engine_error_attempts"]:
        lines.append(
            f"- Attempts the provider ended: {done['provider_error_attempts']}; the engine: {done['engine_error_attempts']}. "
            "Neither is the agent's verdict: like interrupted attempts they are left out of success, wall time and the paired "
            "differences, their trial ran again, and their spend is counted (see Provider faults)."
        )
    if done["not_carried_attempts"]:
        lines.append(
            f"- Attempts of an earlier campaign not carried over: {done['not_carried_attempts']} (their trials ran again here); "
            "spend only, never results."
        )
    by_status = ", ".join(f"`{status}` {count}" for status, count in (done["attempts_by_status"] or {}).items())
    if by_status:
        lines.append(f"- Attempt rows paid for, by status: {by_status}.")
    if not done["all_scheduled_attempted"]:
        lines.append("- Not every scheduled trial ran: read these counts with the outcome summary; this report is not proof of a complete run.")
    lines.append("- Trials without a result are never counted as attempts or successes.")

    lines += _decision_section(report)

    lines += _variant_section(report)
    lines += fingerprints.lines(report["experiment"])
    lines += _faults_section(report)
    lines += differences.section(report, svg_name)
    lines += _missing_section(report)
    lines += [
        "",
        "## Cost basis",
        "",
        "`measured_spend_usd` is runtime-reported cost (costUsd) from model-catalog price estimates: an estimate, not a provider invoice. "
        "It sums every attempt paid for, failures and interrupted attempts included; a partial sum is not proof of zero spend. No cost is made up from tool counts or missing usage.",
    ]
    lines += _spend_lines(report)
    pricing = report["runtime_versions"]
    lines.append(f"Pricing catalog digest: {or_reason('`' + pricing['pricing_catalog_digest'] + '`' if pricing['pricing_catalog_digest'] else 'null', pricing['pricing_catalog_digest_reason'])}.")
    lines += ["", "## Uncontrolled factors", ""]
    lines += [f"- {_FACTORS.get(f, f)}" for f in report["uncontrolled_factors"]]
    lines += _reasoning_lines(report)
    lines += _identity_section(report)
    red = report["redaction"]
    lines += [
        "",
        "## Sharing",
        "",
        "This summary and its JSON hold only allowlisted fields: code-authored ids, numbers, hashes, bounded failure classes and runtime/model metadata. "
        "No prompts, model output, reasoning, credentials, headers, tool outputs, paths or exception text. Share them only after review; "
        "never share private failure bundles, environment snapshots or the base config.",
        f"Allowlist changes while building: {red['dropped_keys']} keys dropped, {red['unlisted_values']} values outside their vocabulary, "
        f"{red['redacted_ids']} ids redacted, {red['nulled_values']} values nulled.",
        "",
    ]
    return "\n".join(lines)


def _decision_section(report: dict[str, Any]) -> list[str]:
    pd = report["paired_differences"]
    if "comparisons" in pd:
        # An experiment of its own variants: a verdict per candidate, none adopted.
        words = {
            **_BASIS,
            "interval_includes_zero": "its interval includes zero",
            "measured_benefit_requires_review": "its interval lies above zero",
            "success_regression": "its interval lies below zero",
        }
        if not offline_ran(report):
            words["synthetic_figures"] = _BASIS["synthetic_route"]
        return [
            "",
            "## Decision",
            "",
            f"**No variant is adopted by this report.** Each candidate is read against the baseline `{pd['baseline']}`; "
            "a candidate that reads better still needs review of its success and security checks before any change.",
            "",
            *differences.candidate_decisions(report, words),
        ]
    return [
        "",
        "## Decision",
        "",
        "**Keep current defaults; keep the coding disclosure profile opt-in.** No profile is promoted by this report.",
        "",
        f"Basis: {_BASIS.get(_decision_words(report), report['decision']['basis'])}.",
        *differences.inconclusive_lines(report),
        "Smaller tool schemas or lower schema-token estimates are not evidence of better coding outcomes and never justify promotion.",
    ]


def _variant_section(report: dict[str, Any]) -> list[str]:
    # Shown wherever a provider is priced: a run whose agent recorded no token counts says
    # its equivalent spend is unknown instead of leaving the column out.
    priced = any(p.get("basis") for p in report.get("providers") or [])
    show_equivalent = priced or any(v.get("equivalent_spend_usd") is not None or v.get("equivalent_spend_status") == "mixed_price_bases" for v in report["variants"])
    header = "| variant | attempts | successes | success rate | interrupted attempts | measured spend USD | spend complete | cost per verified success USD |"
    rule = "|---|---:|---:|---:|---:|---:|---|---:|"
    if show_equivalent:
        header += f" equivalent spend USD ({_equivalent_label(report)}) |"
        rule += "---:|"
    lines = ["", "## Per variant", "", header, rule]
    for v in report["variants"]:
        spend = _usd(v["measured_spend_usd"])
        if v["measured_spend_status"] == "partial":
            spend += " (partial)"
        row = (
            f"| {v['variant']} | {v['attempts']} | {v['successes']} | {or_reason(num(v['success_rate']), v['success_rate_reason'])} "
            f"| {v['interrupted_attempts']} | {spend} | {num(v['spend_complete'])} | {or_reason(_usd(v['cost_per_verified_success_usd']), v['cost_per_verified_success_reason'])} |"
        )
        if show_equivalent:
            if v["equivalent_spend_status"] == "mixed_price_bases":
                eq = "null (mixed_price_bases)"
            elif v["equivalent_spend_usd"] is None:
                eq = "unknown (" + _NO_EQUIVALENT.get(v["equivalent_spend_status"], str(v["equivalent_spend_status"])) + ")"
            else:
                eq = _usd(v["equivalent_spend_usd"]) + (" (partial)" if v["equivalent_spend_status"] == "partial" else "")
            row += f" {eq} |"
        lines.append(row)
    lines.append("")
    lines.append(
        "Attempts are the trials' results (one finished attempt each) and include failures and timeouts; success is the external verifier's verdict only. "
        "Measured spend covers every attempt paid for, interrupted ones included."
    )
    return lines


_BASIS_WORDS = {
    "public_list_price": "recorded token counters x the provider's public list price: list-price equivalent, not billed",
    "synthetic": "recorded token counters x synthetic prices (a simulated or replayed route, no provider): synthetic-price equivalent, not billed, not a list price",
}


def _integrity_lines(report: dict[str, Any]) -> list[str]:
    integrity = report["integrity"]
    if integrity["chain_verified"] is False:
        return [
            f"> **Unverified.** `campaign verify` finds {integrity['problems']} problem(s) in the attempt rows behind this report: "
            "rows were changed, deleted or reordered outside the engine, so the numbers below may not be the recorded ones. "
            "It was published with `--allow-unverified`; do not cite it as evidence.",
            "",
        ]
    if integrity["chain_verified"] is None:
        return ["> The attempt rows' hash chain was not checked for this report; run `campaign verify`.", ""]
    return []


_NO_EQUIVALENT = {
    "none_measured": "no attempt recorded every token count it needs",
    "no_attempts": "no attempts",
}


def _equivalent_label(report: dict[str, Any]) -> str:
    bases = {v.get("equivalent_spend_basis") for v in report["variants"] if v.get("equivalent_spend_usd") is not None}
    if not bases:  # no figure at all: the priced providers' bases say what it would have been
        bases = {p["basis"] for p in report.get("providers") or [] if p.get("basis")}
    if bases == {"synthetic"}:
        return "synthetic-price equivalent, not billed"
    if bases == {"public_list_price"}:
        return "list-price equivalent, not billed"
    return "equivalent, not billed; price bases differ or are unrecorded, see Cost basis"


def _spend_lines(report: dict[str, Any]) -> list[str]:
    """Where measured spend comes from (the campaign lineage) and each equivalent-spend basis."""
    spend = report["spend"]
    campaigns = spend["campaigns"] or []
    lines = []
    if len(campaigns) > 1:
        lines.append(
            f"Spend sums the attempt rows of campaigns {', '.join(str(c) for c in campaigns)}: this campaign and, followed through "
            "`campaigns.continues_campaign_id` (the store's campaign lineage), every campaign it continues, since the operator paid for "
            "their interrupted and not-carried attempts too. The sums are exact SQL sums over that lineage."
        )
    limits = spend.get("limits")
    if limits:
        caps = [f"{label} {format(Decimal(repr(limits[key])).normalize(), 'f')} USD" for key, label in (("max_spend_usd", "all providers"), ("provider_max_spend_usd", "each provider"), ("per_attempt_ceiling_usd", "each attempt"))
                if limits.get(key) is not None]  # fmt: skip
        lines.append(f"The run was held to local caps: {', '.join(caps)}.")
    providers = report["providers"] or []
    with_equivalent = [p for p in providers if p["equivalent_spend_usd"] is not None]
    if not with_equivalent:
        return lines
    for p in with_equivalent:
        words = _BASIS_WORDS.get(p["basis"], "recorded token counters x catalog prices whose basis is not recorded in the store")
        lines.append(f"Equivalent spend for provider `{p['name']}` is {words}.")
    if spend["equivalent_spend_reason"] == "mixed_price_bases":
        totals = "; ".join(f"{basis}: {_usd(total)}" for basis, total in (spend["equivalent_spend_by_basis"] or {}).items())
        lines.append(
            "Synthetic and list prices are different bases and are never added into one sum: there is no overall equivalent-spend total"
            + (f" (per basis: {totals})." if totals else ".")
        )
    if len(providers) > 1:
        lines += ["", "| provider | price basis | attempts | interrupted attempts | measured spend USD | equivalent spend USD |", "|---|---|---:|---:|---:|---:|"]
        for p in providers:
            eq = _usd(p["equivalent_spend_usd"]) + (" (partial)" if p["equivalent_spend_status"] == "partial" else "")
            lines.append(
                f"| {p['name']} | {p['basis'] or 'not recorded'} | {p['attempts']} | {p['interrupted_attempts']} | {_usd(p['measured_spend_usd'])} | {eq} |"
            )
        lines.append("")
    return lines


def _faults_section(report: dict[str, Any]) -> list[str]:
    """Attempts the provider ended, per provider and variant: an imbalance between the
    variants (one sends more requests, so meets more faults) shows here."""
    rows = report.get("provider_faults") or []
    if not rows:
        return []
    lines = [
        "",
        "## Provider faults",
        "",
        "Attempts whose last model request the recording proxy saw end on a provider fault (HTTP 429/529/5xx, a refused or reset "
        "connection, a cut stream, a silent upstream). They carry no verdict and their trial ran again; faults a client "
        "recovered from are in each trial's diagnostics, not here.",
        "",
        "| provider | variant | attempts ended by the provider | faults that ended them |",
        "|---|---|---:|---|",
    ]
    for r in rows:
        faults = ", ".join(f"{PROVIDER_FAULT_WORDS.get(k, k)} x{n}" for k, n in (r["by_fault"] or {}).items())
        lines.append(f"| {r['provider']} | {r['variant']} | {r['attempts']} | {faults} |")
    return lines


def _missing_section(report: dict[str, Any]) -> list[str]:
    lines = ["", "## What is missing and why", ""]
    any_missing = False
    for v in report["variants"]:
        missing = v["missing"] or {}
        if missing:
            any_missing = True
            counts = "; ".join(f"{COUNTER_WORDS.get(name, name)} {count}" for name, count in missing.items())
            lines.append(f"- {v['variant']}, attempts (of {v['attempts']}) with the value unknown, recorded as null and never 0: {counts}.")
        if v["spend_attempts"] and not v["spend_complete"]:
            any_missing = True
            measured = "no spend was measured" if v["measured_spend_status"] == "none_measured" else "measured spend is partial"
            lines.append(
                f"- {v['variant']}: spend complete for {v['attempts_with_complete_spend']} of {v['spend_attempts']} attempts paid for, "
                f"so {measured} and cost per verified success is not computed."
            )
        if v["interrupted_attempts"]:
            any_missing = True
            running = f", {v['unfinished_attempts']} of them left running by a killed runner" if v["unfinished_attempts"] else ""
            lines.append(
                f"- {v['variant']}: {v['interrupted_attempts']} attempt(s) interrupted{running}: no verdict, so no outcome or counter "
                "from them is reported; their spend is in measured spend."
            )
    if report["runtime"]["client_version"] is None:
        lines.append("- Client/runtime version: not recorded in the store.")
    if report["runtime_versions"]["pricing_catalog_digest"] is None:
        lines.append("- Pricing catalog digest: no providers catalog is recorded for this campaign.")
    paid = sum((report["completion"]["attempts_by_status"] or {}).values())
    if not report["completion"]["attempted"] and paid:
        # Attempts ran and were paid for, none with a result (stopped at a ceiling, say).
        lines.append(f"- No trial has a result, so no outcome or usage counter is reported; the spend of the {paid} attempt(s) paid for is in measured spend.")
    elif not report["completion"]["attempted"]:
        # Nothing was measured: saying every counter was observed would read as a complete record.
        lines.append("- No trial was attempted, so no outcome, usage counter or spend was measured.")
    elif not any_missing:
        lines.append("- Every outcome and usage counter was observed for every attempt.")
    return lines


def _identity_section(report: dict[str, Any]) -> list[str]:
    e, a, r = report["experiment"], report["approval"], report["runtime"]
    suite = e.get("task_suite")
    rows = [
        ("experiment digest", a["experiment_digest"]),
        ("plan digest", a["plan_digest"]),
        ("approved plan digest", a["approved_plan_digest"]),
        ("revision", e["revision"]),
        ("source digest", e["source_digest"]),
        ("compiled build digest", e["compiled_build_digest"]),
        ("config digest", e["config_digest"]),
        ("profile python digest", e["profile_python_digest"]),
        ("model", e["model"] or r["model"]),
        ("agent", r["agent"]),
        ("providers", ", ".join(r["providers"] or []) or None),
        ("reasoning", e["reasoning"]),
        ("repetitions", e["repetitions"]),
        ("seed", e["seed"]),
        ("attempt timeout seconds", e["timeout"]),
        ("run timeout seconds", e["run_timeout"]),
        ("tasks", len(e["tasks"]) if e["tasks"] is not None else None),
        # Only for --task-suite: the built-in tasks' reports keep their rows.
        *([("task suite", suite["name"]), ("task suite digest", suite["digest"])] if suite else []),
        ("report generator", f"campaign {report['generator']['version']}"),
    ]
    lines = ["", "## Identity", "", "| field | value |", "|---|---|"]
    lines += [f"| {name} | {'null' if value is None else f'`{value}`'} |" for name, value in rows]
    chains = report["integrity"].get("chains") or []  # reports written before published none
    lines += [f"| chain end, campaign {end['campaign_id']} | link `{end['links']}`, head `{end['head']}`{', final' if end['final'] else ''} |" for end in chains]
    if chains:
        lines += ["", "`campaign verify --against` with this report's JSON checks that a store still holds these chains: none of their links removed or resealed, and nothing added after a final one."]
    if suite and suite["unchecked_tasks"]:
        lines += ["", f"**Warning:** {len(suite['unchecked_tasks'])} task(s) of this suite were never proven sound by `campaign tasks check` as they ran: {', '.join(suite['unchecked_tasks'])}."]
    return lines
