"""The paired schedule: stable ids, seeded shuffle + rotation, interleaved by pair.

Each task x repetition is a pair with a stable ``pair_id``; each variant in it a
trial with a stable ``trial_id``. Within a pair, the variant order is a seeded
shuffle (per task) rotated by the repetition, so for two variants the orders
alternate AB, BA, AB, ... and each position is held equally often when the
repetition count is even. Pairs run repetition-major (every task's first pair,
then every task's second), so slow drift in the provider or the machine spreads
over all tasks instead of landing on the last ones.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from campaign.vocabulary import VARIANTS


@dataclass(frozen=True)
class ScheduledTrial:
    position: int
    pair_id: str
    trial_id: str
    provider: str
    task: str
    variant: str
    repetition: int
    pair_order: int


def variant_order(seed: int, task: str, repetition: int, variants: Sequence[str] = VARIANTS) -> tuple[str, ...]:
    """The within-pair order: a shuffle seeded by (seed, task), rotated by repetition."""
    order = list(variants)
    # str seeds hash with SHA-512 (random's version 2), stable across runs and platforms.
    random.Random(f"campaign-schedule:{seed}:{task}").shuffle(order)
    shift = (repetition - 1) % len(order)
    return tuple(order[shift:] + order[:shift])


def pair_id(provider: str | None, task: str, repetition: int) -> str:
    prefix = f"{provider}/" if provider else ""
    return f"{prefix}{task}/r{repetition}"


def build_schedule(
    tasks: Sequence[str],
    repetitions: int,
    seed: int,
    variants: Sequence[str] = VARIANTS,
    providers: Sequence[str | None] = (None,),
) -> tuple[ScheduledTrial, ...]:
    if repetitions < 1:
        raise ValueError("repetitions must be positive")
    for label, names in (("task", tasks), ("variant", variants), ("provider", providers)):
        if len(set(names)) != len(names):
            raise ValueError(f"a {label} is listed twice; trial ids would collide")
    if not variants:
        raise ValueError("at least one variant is needed")
    trials: list[ScheduledTrial] = []
    for provider in providers:
        for repetition in range(1, repetitions + 1):
            for task in tasks:
                pid = pair_id(provider, task, repetition)
                for order, variant in enumerate(variant_order(seed, task, repetition, variants)):
                    trials.append(
                        ScheduledTrial(
                            position=len(trials),
                            pair_id=pid,
                            trial_id=f"{pid}/{variant}",
                            provider=provider or "",
                            task=task,
                            variant=variant,
                            repetition=repetition,
                            pair_order=order,
                        )
                    )
    return tuple(trials)
