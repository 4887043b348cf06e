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
from typing import Any

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


# The one variant of a non-paired run (each task once, no comparison).
SINGLE_VARIANT = "default"


def variant_order(seed: int, task: str, repetition: int, variants: Sequence[str] = VARIANTS) -> tuple[str, ...]:
    """The within-pair order: a shuffle seeded by (seed, task), rotated by repetition."""
    return _rotated(_shuffled(seed, task, variants), repetition)


def _shuffled(seed: int, task: str, variants: Sequence[str]) -> list[str]:
    order = list(variants)
    # str seeds hash with SHA-512 (random's version 2), stable across runs and platforms.
    random.Random(f"campaign-schedule:{seed}:{task}").shuffle(order)
    return order


def _rotated(order: list[str], repetition: int) -> tuple[str, ...]:
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
    return tuple(ScheduledTrial(*row) for row in schedule_rows(tasks, repetitions, seed, variants, providers))


def schedule_rows(
    tasks: Sequence[str],
    repetitions: int,
    seed: int,
    variants: Sequence[str] = VARIANTS,
    providers: Sequence[str | None] = (None,),
) -> list[tuple[Any, ...]]:
    """The schedule's trials as plain tuples in ScheduledTrial's field order: what a
    verifier rebuilds for 100,000 trials at a time, without an object per trial."""
    if repetitions < 1:
        raise ValueError("repetitions must be positive")
    for label, names in (("task", tasks), ("variant", variants), ("provider", providers)):
        if len(set(names)) != len(names):
            raise ValueError(f"a {label} is listed twice; trial ids would collide")
    if not variants:
        raise ValueError("at least one variant is needed")
    rows: list[tuple[Any, ...]] = []
    # The shuffle depends on the task alone, not on the repetition.
    shuffled = {task: _shuffled(seed, task, variants) for task in tasks}
    for provider in providers:
        for repetition in range(1, repetitions + 1):
            for task in tasks:
                pid = pair_id(provider, task, repetition)
                for order, variant in enumerate(_rotated(shuffled[task], repetition)):
                    rows.append((len(rows), pid, f"{pid}/{variant}", provider or "", task, variant, repetition, order))
    return rows


def single_run(tasks: Sequence[str]) -> tuple[ScheduledTrial, ...]:
    """The non-paired schedule: each task once, under the one variant."""
    return tuple(ScheduledTrial(*row) for row in single_rows(tasks))


def single_rows(tasks: Sequence[str]) -> list[tuple[Any, ...]]:
    return [(i, pair_id(None, task, 1), f"{pair_id(None, task, 1)}/{SINGLE_VARIANT}", "", task, SINGLE_VARIANT, 1, 0) for i, task in enumerate(tasks)]
