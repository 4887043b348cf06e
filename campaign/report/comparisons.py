"""An experiment of its own variants: every candidate against the baseline.

The built-in experiment (``baseline``, ``coding``) is reported as it always was:
``paired_differences`` itself holds its one comparison. An experiment that names its
own variants has a baseline, its first, and up to seven candidates. Each candidate is
compared with the baseline alone, on the pairs where both have a result
(``aggregates.task_rows``); each interval is at the level that makes all of them hold
together at 95% (``paired.family_confidence``, Bonferroni); and each gets its own
detectable effect at that level and its own decision basis. The report lists them
under ``paired_differences.comparisons`` in the experiment's order. Pure, apart from
``read``'s queries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from campaign.experiment import Stored
from campaign.report import aggregates, detectable, paired, stats
from campaign.vocabulary import VARIANTS

METHOD = "bonferroni"


def variant_order(experiment: Mapping[str, Any]) -> tuple[str, ...]:
    """A stored experiment's variants in its order; the built-in pair (in either order of
    --variants), and an experiment that names none or fewer than two (no comparison of
    its own: a row edited outside the engine), as reports always listed them."""
    names = Stored(experiment).variant_names
    return VARIANTS if names is None or len(names) < 2 or set(names) == set(VARIANTS) else names


def is_builtin(order: Sequence[str]) -> bool:
    """The spec's experiment, whose report keeps its one comparison and its own words."""
    return tuple(order) == VARIANTS


@dataclass(frozen=True)
class Comparison:
    candidate: str
    tasks: tuple[aggregates.TaskRow, ...]
    success: paired.Compared
    wall: paired.Compared
    detectable: dict[str, Any]


def read(conn: Connection, scope: aggregates.Scope, order: Sequence[str], seed: int) -> tuple[Comparison, ...]:
    """Each candidate of ``order`` (its first is the baseline) against the baseline."""
    baseline, candidates = order[0], order[1:]
    if not candidates:  # an experiment edited down to one variant compares nothing
        return ()
    level = paired.family_confidence(len(candidates))
    out = []
    for candidate in candidates:
        tasks = aggregates.task_rows(conn, scope, baseline, candidate)
        success, wall = paired.success_and_wall(tasks, seed, confidence=level)
        out.append(Comparison(candidate, tuple(tasks), success, wall, detectable.block(tasks, seed, confidence=level)))
    return tuple(out)


def section(baseline: str, comparisons: Sequence[Comparison], basis: Callable[[stats.Estimate], str]) -> dict[str, Any]:
    """The keys ``paired_differences`` has for such an experiment, beside the methods;
    ``basis`` is the decision basis of one verified-success estimate."""
    return {
        "baseline": baseline,
        "adjustment": {
            "method": METHOD,
            "candidates": len(comparisons),
            "family_confidence": stats.CONFIDENCE,
            "comparison_confidence": paired.family_confidence(len(comparisons)) if comparisons else None,
        },
        "comparisons": [
            {
                "candidate": c.candidate,
                "exploratory": paired.exploratory(c.success, c.wall),
                "verified_success": paired.as_report("verified_success", c.success),
                "wall_seconds": paired.as_report("wall_seconds", c.wall),
                "detectable_effect": c.detectable,
                "per_task": per_task(c.tasks),
                "decision_basis": basis(c.success.headline),
            }
            for c in comparisons
        ],
    }


def per_task(tasks: Sequence[aggregates.TaskRow], candidate_key: str = "candidate_successes") -> list[dict[str, Any]]:
    """Each task's row of a comparison (the built-in experiment names its candidate's
    successes ``coding_successes``, as its reports always did)."""
    return [
        {
            "task": t.task,
            "pairs": t.pairs,
            "success_difference": t.success_difference,
            "baseline_successes": t.baseline_successes,
            candidate_key: t.candidate_successes,
            "wall_pairs": t.wall_pairs,
            "wall_seconds_difference": t.wall_difference,
        }
        for t in tasks
    ]
