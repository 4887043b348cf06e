"""Coverage table: what the report's intervals really cover, by simulation with known truths.

For each population of tasks (baseline success from Beta(a, a); a mean effect of 0 or
+0.15, on the probability or the logit scale, varying between tasks: see
``campaign.report.calibration``), each number of tasks and of repetitions, ``--sims``
simulated campaigns are put through the headline interval (``stats.paired_interval``)
and the spec's percentile bootstrap (``stats.summarize``). Printed per cell: the share
of campaigns whose interval holds the population's true mean effect (95% is the claim)
and, for no effect, the share that excludes 0 (5% is the claim). The Monte Carlo
standard error of a 95% coverage is printed once.

    python bench/bench_coverage.py [--sims 2000] [--tasks 4,8,12,24,50] [--repetitions 2,4]
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
    args = parser.parse_args()
    tasks = [int(t) for t in args.tasks.split(",")]
    reps = [int(r) for r in args.repetitions.split(",")]
    print(f"{args.sims} campaigns a cell; Monte Carlo standard error of a 95% coverage: {math.sqrt(0.95 * 0.05 / args.sims):.1%}")
    print("| population | effect | tasks x reps | headline covers | headline excludes 0 | percentile covers | percentile excludes 0 |")
    print("|---|---|---|---:|---:|---:|---:|")
    for setting in SETTINGS:
        truth = setting.truth()
        for k in tasks:
            for r in reps:
                head = calibration.measure(calibration.headline, setting, k, r, args.sims, seed=k * 100 + r, truth=truth)
                pct = calibration.measure(calibration.percentile, setting, k, r, args.sims, seed=k * 100 + r, truth=truth)
                effect = "none" if setting.effect == 0 else f"+{setting.effect} {setting.scale}"
                print(f"| Beta({setting.beta_a}, {setting.beta_a}) | {effect} | {k} x {r} | {head.coverage:.1%} | {head.rejects_zero:.1%} | {pct.coverage:.1%} | {pct.rejects_zero:.1%} |", flush=True)


if __name__ == "__main__":
    main()
