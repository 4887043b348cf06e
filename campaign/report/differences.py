"""The Markdown's paired differences: the headline interval beside the spec's bootstrap,
the sign-flip p, why an interval is what it is, where the two disagree, the exploratory
banner and the "inconclusive" sentence. Rendered from the sanitized report only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from campaign.report import detectable, paired, stats
from campaign.report.words import num, or_reason, signed

_INTERVAL_REASONS = {
    "between_task_spread_floored": "the task means varied less than their own pairs' spread allows, so that spread (pooled over the pairs within tasks, with its degrees of freedom) sets the width",
    "no_spread_bounded": "every pair's difference is the same, so the interval is the share of pairs that could differ unseen in this many",
}


def views(pd: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each comparison the report holds, as (its label, its paired differences): the built-in
    experiment's one, coding minus baseline; an experiment of its own variants, one per
    candidate (``CANDIDATE minus BASELINE``), each with the methods of the whole."""
    if "comparisons" not in pd:
        return [("coding minus baseline", dict(pd))]
    return [(f"{c['candidate']} minus {pd['baseline']}", {**pd, **c}) for c in pd["comparisons"] or ()]


def level(pd: Mapping[str, Any]) -> str:
    """The confidence of each comparison's interval, as a percentage ("95%", "97.5%")."""
    adjusted = (pd.get("adjustment") or {}).get("comparison_confidence")
    return f"{100 * (adjusted or stats.CONFIDENCE):.10g}%"


def section(report: dict[str, Any], svg_name: str | None) -> list[str]:
    pd = report["paired_differences"]
    if "comparisons" in pd:
        return _candidates_section(pd, svg_name)
    boot = pd["bootstrap"]
    lines = [
        "",
        "## Paired differences (coding minus baseline)",
        "",
        "Within each task the per-pair differences are averaged, then tasks are weighted equally. "
        "The 95% interval is a t interval on the task means (tasks minus one degrees of freedom; never narrower than the pairs' own "
        "spread within tasks allows), measured by simulation to cover at least 95% from 8 to 50 tasks; every decision below reads it. "
        f"Beside it, the specification's percentile bootstrap over whole task clusters ({boot['resamples']} resamples, seed {boot['seed']})"
        f"{_coverage_words(pd['verified_success']['tasks'])}. "
        "The sign-flip p is the exact randomisation test of no effect on the task means. "
        "A missing wall time drops only that pair's wall comparison.",
    ]
    return lines + _comparison(pd, "95%", svg_name)


def _candidates_section(pd: dict[str, Any], svg_name: str | None) -> list[str]:
    boot, adjustment = pd["bootstrap"], pd["adjustment"] or {}
    lines = [
        "",
        f"## Paired differences (each candidate minus {pd['baseline']})",
        "",
        f"Each candidate is compared with the baseline `{pd['baseline']}` on the pairs where both have a result. "
        "Within each task the per-pair differences are averaged, then tasks are weighted equally. "
        f"Each {level(pd)} interval is a t interval on the task means (tasks minus one degrees of freedom; never narrower than the pairs' own "
        f"spread within tasks allows): {adjustment.get('candidates')} candidate(s), Bonferroni-adjusted, so that all of their intervals "
        f"hold together at {100 * (adjustment.get('family_confidence') or stats.CONFIDENCE):.10g}%; every decision reads them. "
        f"Beside each, the specification's percentile bootstrap over whole task clusters at 95%, unadjusted ({boot['resamples']} resamples, "
        f"seed {boot['seed']}). The sign-flip p is the exact randomisation test of no effect on the task means. "
        "A missing wall time drops only that pair's wall comparison.",
    ]
    if svg_name:
        lines += ["", f"![Forest plot of each candidate's paired differences]({svg_name})"]
    for label, view in views(pd):
        lines += ["", f"### {label}"]
        lines += _comparison(view, level(pd), None)
    return lines


def _comparison(pd: dict[str, Any], level: str, svg_name: str | None) -> list[str]:
    """One comparison's table, notes, detectable effect and per-task rows."""
    lines = []
    if pd["exploratory"]:
        lines.append(_exploratory_line(pd))
    lines += [
        "",
        f"| metric | estimate | {level} interval | bootstrap 95% (spec) | sign-flip p | tasks | pairs |",
        "|---|---:|---|---|---:|---:|---:|",
    ]
    for key, label in (("verified_success", "verified success (rate)"), ("wall_seconds", "wall seconds")):
        d = pd[key]
        boot_d = d.get("bootstrap_percentile_95") or {}
        lines.append(
            f"| {label} | {or_reason(signed(d['estimate']), d['estimate_reason'])} | {_interval(d)} | {_interval(boot_d)} | "
            f"{num(d.get('sign_flip_p'))} | {d['tasks']} | {d['pairs']} |"
        )
    notes = [why for d in (pd["verified_success"], pd["wall_seconds"]) if (why := _reason_line(d))] + _disagreement(pd)
    lines += ["", *notes] if notes else []
    lines += ["", detectable.detectable_line(pd)]
    if svg_name:
        lines += ["", f"![Forest plot of paired differences per task]({svg_name})", "", f"The forest plot ([{svg_name}]({svg_name})) shows each task's mean difference and the overall estimate with its interval."]
    if pd["per_task"]:
        lines += ["", "| task | pairs | success difference | wall pairs | wall seconds difference |", "|---|---:|---:|---:|---:|"]
        for t in pd["per_task"]:
            lines.append(f"| {t['task']} | {t['pairs']} | {signed(t['success_difference'])} | {t['wall_pairs']} | {signed(t['wall_seconds_difference'], 1)} |")
    return lines


def _interval(d: Mapping[str, Any]) -> str:
    if d.get("ci_low") is None:
        return f"null ({d.get('interval_reason')})"
    return f"[{signed(d['ci_low'])}, {signed(d['ci_high'])}]"


def _reason_line(d: Mapping[str, Any]) -> str | None:
    why = _INTERVAL_REASONS.get(d["interval_reason"]) if d["ci_low"] is not None else None
    return f"The {d['metric'].replace('_', ' ')} interval: {why} ({d['interval_reason']})." if why else None


def _coverage_words(tasks: int) -> str:
    words = paired.percentile_coverage(tasks)
    return f", which simulation measured to cover {words} of true effects at {tasks} task clusters" if words else ""


def _disagreement(pd: Mapping[str, Any]) -> list[str]:
    """One line where the headline and the spec's bootstrap disagree about excluding 0."""
    out = []
    for key in ("verified_success", "wall_seconds"):
        d = pd[key]
        boot = d.get("bootstrap_percentile_95") or {}
        headline, spec = paired.excludes_zero(d["ci_low"], d["ci_high"]), paired.excludes_zero(boot.get("ci_low"), boot.get("ci_high"))
        if headline != spec:
            which = ("the t interval excludes zero and the bootstrap does not" if headline else "the bootstrap excludes zero and the t interval does not")
            out.append(f"The two intervals of {key.replace('_', ' ')} disagree: {which}; the report reads the t interval.")
    return out


def wall_only_exploratory(pd: dict[str, Any]) -> bool:
    """Only the wall comparison rests on few task clusters (missing wall times left it
    fewer than verified success, which has enough): the banner must say which."""
    return pd["exploratory"] and not stats.exploratory(pd["verified_success"]["tasks"])


def _exploratory_line(pd: dict[str, Any]) -> str:
    below = pd["exploratory_below_tasks"]
    if not wall_only_exploratory(pd):
        return f"**Exploratory:** fewer than {below} task clusters; not a statistically significant or global ranking."
    return (
        f"**Exploratory (wall seconds):** the wall-time comparison rests on {pd['wall_seconds']['tasks']} task clusters, fewer than {below}, "
        f"so it is no statistically significant or global ranking; verified success rests on {pd['verified_success']['tasks']}."
    )


def inconclusive_lines(report: dict[str, Any]) -> list[str]:
    sentence = detectable.inconclusive(report["paired_differences"])
    return [f"Verified success is {sentence}."] if sentence else []


# Where an interval decides, the word for it; every other basis is "inconclusive" with its reason.
_VERDICT = {"measured_benefit_requires_review": "better", "success_regression": "worse"}


def candidate_decisions(report: dict[str, Any], basis_words: Mapping[str, str]) -> list[str]:
    """Per candidate of an experiment of its own variants: better, worse, or inconclusive at
    this size (with the effect it could have detected, or why it cannot say); never a promotion."""
    pd = report["paired_differences"]
    lines = []
    for label, view in views(pd):
        basis = view["decision_basis"]
        verdict = _VERDICT.get(basis)
        success = view["verified_success"]
        said = f"verified success {or_reason(signed(success['estimate']), success['estimate_reason'])}, {level(pd)} interval {_interval(success)}"
        if verdict is not None:
            lines.append(f"- `{label}`: **{verdict}** ({said}); {basis_words.get(basis, basis)}.")
            continue
        sentence = detectable.inconclusive(view)
        why = basis_words.get(basis, basis)
        lines.append(f"- `{label}`: **inconclusive at this size** ({said}); {why}" + (f"; {sentence.removeprefix('inconclusive: ')}." if sentence else "."))
    return lines
