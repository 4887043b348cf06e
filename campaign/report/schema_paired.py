"""The report's paired differences, declared (part of ``schema.REPORT_SCHEMA``).

The built-in experiment (``baseline``, ``coding``) has one comparison, coding minus
baseline, in the section itself; an experiment of its own variants has one per
candidate under ``comparisons`` (``report/comparisons.py``), keys its reports alone
carry, so the built-in experiment's reports are byte for byte what they were.
"""

from __future__ import annotations

from campaign.experiment import MAX_VARIANTS
from campaign.report.allowlist import Bool, Const, Enum, Int, List, Num
from campaign.report.codegen import Obj
from campaign.report.fields import DECISION_BASIS, NULL_REASONS, Id, VariantName

_NULLABLE_REASON = Enum(NULL_REASONS)

DIFFERENCE = Obj(
    {
        "metric": Enum(("verified_success", "wall_seconds")),
        "estimate": Num(),
        "estimate_reason": _NULLABLE_REASON,
        "ci_low": Num(),
        "ci_high": Num(),
        "interval_reason": _NULLABLE_REASON,
        "tasks": Int(),
        "pairs": Int(),
        # The exact sign-flip randomisation p-value of "no effect" on the task means.
        "sign_flip_p": Num(),
        # The spec's seeded percentile bootstrap over task clusters, reported beside the
        # headline (ci_low/ci_high, a t interval on task means: report.stats).
        "bootstrap_percentile_95": Obj({"ci_low": Num(), "ci_high": Num(), "interval_reason": _NULLABLE_REASON}),
    }
)

# The smallest effect on verified success the run's own size and spread detect
# (report.detectable): null with the reason when the run cannot show its spread.
DETECTABLE = Obj(
    {
        "metric": Const("verified_success"),
        "effect": Num(),
        "effect_reason": _NULLABLE_REASON,
        "power": Num(),
        "confidence": Num(),
        "simulations": Int(),
        "method": Const("simulated_campaigns_of_this_size"),
    }
)

PER_TASK = Obj(
    {
        "task": Id(),
        "pairs": Int(),
        "success_difference": Num(),
        "baseline_successes": Int(),
        "coding_successes": Int(),
        "wall_pairs": Int(),
        "wall_seconds_difference": Num(),
    }
)

# An experiment of its own variants: one candidate against the baseline (report.comparisons).
COMPARISON = Obj(
    {
        "candidate": VariantName(),
        "exploratory": Bool(),
        "verified_success": DIFFERENCE,
        "wall_seconds": DIFFERENCE,
        "detectable_effect": DETECTABLE,
        "per_task": List(
            Obj(
                {
                    "task": Id(),
                    "pairs": Int(),
                    "success_difference": Num(),
                    "baseline_successes": Int(),
                    "candidate_successes": Int(),
                    "wall_pairs": Int(),
                    "wall_seconds_difference": Num(),
                }
            )
        ),
        "decision_basis": Enum(DECISION_BASIS),
    }
)

PAIRED_DIFFERENCES = Obj(
    {
        # The built-in experiment's one comparison, or each candidate's (below).
        "direction": Enum(("coding_minus_baseline", "candidate_minus_baseline")),
        "cluster": Const("task"),
        "weighting": Const("tasks_equal_after_within_task_mean"),
        # The headline interval every decision reads (report.stats.paired_interval).
        "interval": Obj(
            {
                "method": Const("student_t_on_task_means"),
                "confidence": Num(),
                "degrees_of_freedom": Const("tasks_minus_one"),
            }
        ),
        "sign_flip": Obj(
            {
                "method": Const("sign_flip_of_task_means"),
                "exact_up_to_tasks": Int(),
                "draws_beyond": Int(),
                "seed": Int(),
            }
        ),
        "bootstrap": Obj(
            {
                "method": Const("percentile"),
                "resamples": Int(),
                "confidence": Num(),
                "seed": Int(),
                "generator": Const("numpy_pcg64"),
                "resampled_unit": Const("task_cluster"),
            }
        ),
        "exploratory": Bool(),
        "exploratory_below_tasks": Int(),
        "verified_success": DIFFERENCE,
        "wall_seconds": DIFFERENCE,
        "detectable_effect": DETECTABLE,
        "per_task": List(PER_TASK),
        # An experiment of its own variants: the five above are null, and each
        # candidate is compared with the baseline here, every interval adjusted so
        # that all of them hold together at the family's level. Absent from the
        # built-in experiment's reports, which stay as they were.
        "baseline": VariantName(),
        "adjustment": Obj(
            {"method": Const("bonferroni"), "candidates": Int(), "family_confidence": Num(), "comparison_confidence": Num()}
        ),
        "comparisons": List(COMPARISON, max_items=MAX_VARIANTS - 1),
    },
    optional=frozenset({"baseline", "adjustment", "comparisons"}),
)
