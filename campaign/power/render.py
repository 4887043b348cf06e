"""A plan in words (a table for the terminal) and as JSON (for scripts). No I/O."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from campaign.power import forecast as fc
from campaign.power.pilot import Pilot
from campaign.power.planner import Plan, Row
from campaign.report.comparisons import is_builtin
from campaign.report.spread import EXPLAINED


@dataclass(frozen=True)
class Assumptions:
    baseline_rate: float
    task_spread: float


def as_json(plan: Plan, source: Pilot | Assumptions) -> dict[str, Any]:
    req, smallest = plan.request, plan.smallest
    return {
        "source": _source(source),
        "spread": {
            "within_task": plan.spread.within if plan.spread else None,
            "between_tasks": plan.spread.between if plan.spread else None,
            "reason": plan.spread_reason,
        },
        "target": {
            "effect": req.target.effect,
            "power": req.target.power,
            "half_width": req.target.half_width,
            "confidence": req.confidence,
            # Several candidates: the level of each one's interval (Bonferroni), as the report's.
            **({"interval_confidence": req.interval_confidence} if req.variants > 2 else {}),
        },
        "simulations": req.sims,
        "seed": req.seed,
        "tasks": req.tasks,
        "providers": req.providers,
        "caps": _caps(req.caps),
        "rows": [_row(r) for r in plan.rows],
        "smallest_repetitions": smallest.repetitions if smallest else None,
        "smallest_reason": None if smallest else why_none(plan),
    }


def _source(source: Pilot | Assumptions) -> dict[str, Any]:
    if isinstance(source, Assumptions):
        return {"assumptions": {"baseline_rate": source.baseline_rate, "task_spread": source.task_spread}}
    count, usd = fc.set_aside(source.cells)
    return {
        "pilot": {
            "campaign_id": source.campaign_id,
            "kind": source.kind,
            "provider": source.provider,
            "providers": list(source.providers),
            "tasks": len(source.tasks),
            "pairs": source.pairs,
            **({} if is_builtin(source.variants) else {"variants": list(source.variants), "candidate": source.candidate}),
            "not_forecast_attempts": count,
            "not_forecast_usd": float(usd),
        }
    }


def _caps(caps: fc.SpendLimits | None) -> dict[str, float | None] | None:
    if caps is None:
        return None
    return {"per_attempt_ceiling_usd": float(caps.per_attempt_ceiling_usd), "provider_max_usd": _f(caps.provider_max_spend_usd), "campaign_max_usd": _f(caps.max_spend_usd)}


def _f(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def _row(row: Row) -> dict[str, Any]:
    spend = row.spend
    return {
        "repetitions": row.repetitions,
        "tasks": row.tasks,
        "trials": row.trials,
        "half_width": row.half_width,
        "power": row.power,
        "detectable_effect": row.detectable,
        "false_positive_rate": row.false_positive,
        "reason": row.reason,
        "meets_target": row.meets,
        "spend": None if spend is None else _spend(spend),
    }


def _spend(s: fc.SpendForecast) -> dict[str, Any]:
    return {
        "usd": s.usd,
        "low_usd": s.low_usd,
        "high_usd": s.high_usd,
        "complete": s.complete,
        "over_cap": s.over_cap,
        "may_pass_cap": s.may_pass_cap,
        "seconds_one_runner": s.seconds_one_runner,
        "seconds_parallel": s.seconds_parallel,
        "workers": s.workers,
        "providers": [
            {
                "provider": p.provider,
                "usd": p.usd,
                "low_usd": p.low_usd,
                "high_usd": p.high_usd,
                "complete": p.complete,
                "unknown_attempts": p.unknown_attempts,
                "basis": p.basis,
                "seconds": p.seconds,
                "over_cap": p.over_cap,
                "may_pass_cap": p.may_pass_cap,
            }
            for p in s.providers
        ],
    }


def why_none(plan: Plan) -> str | None:
    req = plan.request
    if req.target.effect is None and req.target.half_width is None:
        return "no_target"
    if plan.spread_reason is not None:
        return plan.spread_reason
    if all(r.reason for r in plan.rows):
        return plan.rows[0].reason
    return "not_met_within_table"


# --- words ---------------------------------------------------------------------------------


def as_text(plan: Plan, source: Pilot | Assumptions) -> list[str]:
    req = plan.request
    lines = [_source_line(source, req.tasks), _spread_line(plan), _target_line(plan), ""]
    effect = req.target.effect
    costs = any(r.spend is not None for r in plan.rows)
    head = [
        "reps", "tasks", "trials", "half-width", f"power@{effect:+.3f}" if effect is not None else "", f"detectable@{req.target.power:.2f}",
        "spend USD (5-95%)" if costs else "", f"wall 1 runner / {_workers(plan)}" if costs else "",
    ]  # fmt: skip
    rows = [head] + [_cells(r, effect is not None) for r in plan.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines += ["  ".join(cell.rjust(w) if i < 6 else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths)) if w).rstrip() for r in rows]
    lines.append("")
    lines += _conclusion(plan, source)
    return lines


def _source_line(source: Pilot | Assumptions, tasks: int) -> str:
    if isinstance(source, Assumptions):
        return f"assumed: baseline success rate {source.baseline_rate:.3f}, between-task spread {source.task_spread:.3f}, {tasks} tasks (no pilot: no spend or wall forecast)"
    scope = f", provider {source.provider} only" if source.provider else ""
    variants = "" if is_builtin(source.variants) else f", variants {', '.join(source.variants)} (the spread of {source.candidate} minus {source.variants[0]})"
    return (
        f"pilot: campaign {source.campaign_id} ({source.kind}{scope}), providers {', '.join(source.providers)}{variants}, "
        f"{len(source.tasks)} task clusters, {source.pairs} complete pairs; planning {tasks} tasks"
    )


def _spread_line(plan: Plan) -> str:
    if plan.spread is None:
        return f"spread: unknown ({plan.spread_reason}): {EXPLAINED[plan.spread_reason]}"  # type: ignore[index]
    return f"spread of a pair's difference: within a task {plan.spread.within:.3f} (variance), between task means {plan.spread.between:.4f}"


def _target_line(plan: Plan) -> str:
    req = plan.request
    level = f"{req.confidence:.0%} interval"
    if req.variants > 2:
        level = f"{100 * req.interval_confidence:.10g}% interval of each of {req.variants - 1} candidates (Bonferroni: {req.confidence:.0%} together)"
    if req.target.effect is not None:
        goal = f"target: detect {req.target.effect:+.3f} with power {req.target.power:.2f} (the {level} excludes 0)"
    elif req.target.half_width is not None:
        goal = f"target: a {level} no wider than +/-{req.target.half_width:.3f}"
    else:
        goal = f"no target given (--effect or --half-width): the table shows the {level}'s half-width and the effect detected with power {req.target.power:.2f}"
    return f"{goal}; {req.sims} simulated campaigns per row, seed {req.seed}"


def _workers(plan: Plan) -> str:
    row = next((r for r in plan.rows if r.spend is not None), None)
    return f"{row.spend.workers} worker(s)" if row and row.spend else ""


def _cells(row: Row, with_power: bool) -> list[str]:
    if row.reason and row.half_width is None:
        stats = [f"({row.reason})", "", ""]
    else:
        stats = [_num(row.half_width), _num(row.power) if with_power else "", _num(row.detectable) if row.detectable is not None else f"({row.reason})"]
    return [str(row.repetitions), str(row.tasks), str(row.trials), *stats, _spend_cell(row.spend), _wall_cell(row.spend)]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _spend_cell(spend: fc.SpendForecast | None) -> str:
    if spend is None:
        return ""
    if spend.usd is None:
        return "unknown"
    mark = " over cap" if spend.over_cap or any(p.over_cap for p in spend.providers) else (" may pass cap" if spend.may_pass_cap or any(p.may_pass_cap for p in spend.providers) else "")
    return f"{'' if spend.complete else '>='}{spend.usd:.2f} ({spend.low_usd:.2f}-{spend.high_usd:.2f}){mark}"


def _wall_cell(spend: fc.SpendForecast | None) -> str:
    if spend is None:
        return ""
    if spend.seconds_one_runner is None:
        return "unknown"
    return f"{duration(spend.seconds_one_runner)} / {duration(spend.seconds_parallel)}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _conclusion(plan: Plan, source: Pilot | Assumptions) -> list[str]:
    smallest = plan.smallest
    lines = []
    if smallest is not None:
        lines.append(f"smallest number of repetitions that meets the target: {smallest.repetitions} ({smallest.trials} trials)")
        lines += provider_lines(smallest.spend)
        nominal = 1 - plan.request.interval_confidence
        if smallest.false_positive is not None and smallest.false_positive > 1.2 * nominal:
            lines.append(
                f"note: at this size the interval excludes 0 in {smallest.false_positive:.1%} of campaigns with no effect "
                f"(nominal {100 * nominal:.3g}%): with this few task clusters the interval is too narrow"
            )
    else:
        why = why_none(plan)
        if why not in (None, "no_target"):
            text = EXPLAINED.get(why, "no number of repetitions in the table meets the target: raise --max-repetitions, or plan more --tasks")  # type: ignore[arg-type]
            lines.append(f"cannot name a number of repetitions ({why}): {text}")
    if isinstance(source, Pilot):
        count, usd = fc.set_aside(source.cells)
        if count:
            lines.append(f"not forecast: {count} pilot attempt(s) interrupted, left running or not carried over ({usd:.4f} USD): their spend is real, but says nothing about the next campaign")
    return lines


def provider_lines(spend: fc.SpendForecast | None) -> list[str]:
    """Per provider, and against each cap: the forecast of one row."""
    if spend is None:
        return []
    lines = []
    for p in spend.providers:
        figure = "unknown" if p.usd is None else f"{'' if p.complete else '>='}{p.usd:.4f} USD ({p.low_usd:.4f}-{p.high_usd:.4f})"
        lines.append(f"  {p.provider}: {figure}, counted as {p.basis}; wall {duration(p.seconds)}{_cap_words(p.over_cap, p.may_pass_cap, p.cap_usd)}")
    if spend.cap_usd is not None:
        lines.append(f"  all providers: {spend.usd:.4f} USD{_cap_words(spend.over_cap, spend.may_pass_cap, spend.cap_usd)}" if spend.usd is not None else "  all providers: unknown")
    return lines


def _cap_words(over: bool | None, may: bool | None, cap: Decimal | None) -> str:
    if over:
        return f"; WARNING: with one attempt ceiling on top it passes the cap of {cap} USD: the spend gate would stop the campaign early"
    if may:
        return f"; the high end with one attempt ceiling on top passes the cap of {cap} USD"
    return f"; within the cap of {cap} USD" if cap is not None else ""
