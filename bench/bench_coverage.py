"""Coverage table: what the report's intervals really cover, by simulation with known truths.

For each population of tasks (baseline success from Beta(a, a); a mean effect of 0 or
+0.15, on the probability or the logit scale, varying between tasks: see
``campaign.report.calibration``), each number of tasks and of repetitions, ``--sims``
simulated campaigns are put through the headline interval (``stats.paired_interval``)
and the spec's percentile bootstrap (``stats.summarize``). Printed per cell: the share
of campaigns whose interval holds the population's true mean effect (95% is the claim)
and, for no effect, the share that excludes 0 (5% is the claim). The Monte Carlo
standard error of a 95% coverage is printed once.

    python bench/bench_coverage.py [--sims 2000] [--tasks 4,8,12,24,50] [--repetitions 2,4] [--summary]

``--summary`` prints one row per size instead (the table in docs/reports.md): the range of
coverage over the six populations and effects, and the largest false-positive rate.
"""

from __future__ import annotations

import argparse
import math

from campaign.report import calibration
from campaign.report.calibration import Setting

SETTINGS = [Setting(a, effect, scale) for a in (0.8, 0.2) for effect, scale in ((0.0, "probability"), (0.15, "probability"), (0.15, "logit"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--tasks", default="4,8,12,24,50")
    parser.add_argument("--repetitions", default="2,4")
    parser.add_argument("--summary", action="store_true", help="one row per size: coverage ranges and the largest false-positive rate")
    args = parser.parse_args()
    tasks = [int(t) for t in args.tasks.split(",")]
    reps = [int(r) for r in args.repetitions.split(",")]
    print(f"{args.sims} campaigns a cell; Monte Carlo standard error of a 95% coverage: {math.sqrt(0.95 * 0.05 / args.sims):.1%}")
    if args.summary:
        return summary(tasks, reps, args.sims)
    print("| population | effect | tasks x reps | headline covers | headline excludes 0 | percentile covers | percentile excludes 0 |")
    print("|---|---|---|---:|---:|---:|---:|")
    for setting in SETTINGS:
        truth = setting.truth()
        for k in tasks:
            for r in reps:
                head, pct = measured(setting, k, r, args.sims, truth)
                effect = "none" if setting.effect == 0 else f"+{setting.effect} {setting.scale}"
                print(f"| Beta({setting.beta_a}, {setting.beta_a}) | {effect} | {k} x {r} | {head.coverage:.1%} | {head.rejects_zero:.1%} | {pct.coverage:.1%} | {pct.rejects_zero:.1%} |", flush=True)


def measured(setting: Setting, k: int, r: int, sims: int, truth: float) -> tuple[calibration.Measured, calibration.Measured]:
    head = calibration.measure(calibration.headline, setting, k, r, sims, seed=k * 100 + r, truth=truth)
    pct = calibration.measure(calibration.percentile, setting, k, r, sims, seed=k * 100 + r, truth=truth)
    return head, pct


def summary(tasks: list[int], reps: list[int], sims: int) -> None:
    truths = {setting: setting.truth() for setting in SETTINGS}
    print("| tasks x repetitions | t interval covers | t interval false positives | percentile bootstrap covers | percentile false positives |")
    print("|---|---:|---:|---:|---:|")
    for k in tasks:
        for r in reps:
            cells = [(setting, *measured(setting, k, r, sims, truths[setting])) for setting in SETTINGS]
            head = [h.coverage for _, h, _ in cells]
            pct = [p.coverage for _, _, p in cells]
            head_fp = max(h.rejects_zero for s, h, _ in cells if s.effect == 0)
            pct_fp = max(p.rejects_zero for s, _, p in cells if s.effect == 0)
            print(f"| {k} x {r} | {min(head):.1%}-{max(head):.1%} | {head_fp:.1%} | {min(pct):.1%}-{max(pct):.1%} | {pct_fp:.1%} |", flush=True)

if __name__ == "__main__":
    main()
