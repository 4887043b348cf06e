"""The paired schedule: stable ids, deterministic, counterbalanced, interleaved by pair."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from campaign.schedule import VARIANTS, build_schedule, pair_id, variant_order

task_names = st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,11}", fullmatch=True), min_size=1, max_size=6, unique=True)
seeds = st.integers(min_value=0, max_value=2**63)


def as_json(schedule) -> str:
    return json.dumps([dataclasses.asdict(t) for t in schedule], sort_keys=True)


@given(tasks=task_names, repetitions=st.integers(1, 9), seed=seeds)
@settings(max_examples=60, deadline=None)
def test_same_inputs_give_a_byte_identical_schedule(tasks, repetitions, seed):
    assert as_json(build_schedule(tasks, repetitions, seed)) == as_json(build_schedule(list(tasks), repetitions, seed))


@given(tasks=task_names, half=st.integers(1, 6), seed=seeds)
@settings(max_examples=80, deadline=None)
def test_each_order_appears_equally_often_per_task_for_even_repetitions(tasks, half, seed):
    schedule = build_schedule(tasks, 2 * half, seed)
    for task in tasks:
        firsts = Counter(t.variant for t in schedule if t.task == task and t.pair_order == 0)
        assert firsts == {"baseline": half, "coding": half}


@given(tasks=task_names, repetitions=st.integers(1, 9), seed=seeds)
@settings(max_examples=60, deadline=None)
def test_odd_repetitions_are_as_balanced_as_possible_and_orders_alternate(tasks, repetitions, seed):
    schedule = build_schedule(tasks, repetitions, seed)
    for task in tasks:
        orders = [t.variant for t in schedule if t.task == task and t.pair_order == 0]
        assert len(orders) == repetitions
        assert max(Counter(orders).values()) - min(Counter(orders).values(), default=0) <= 1
        # AB, BA, AB, ...: consecutive repetitions of a task swap the order.
        assert all(a != b for a, b in zip(orders, orders[1:]))


variant_sets = st.lists(st.from_regex(r"[a-z][a-z0-9_-]{0,9}", fullmatch=True), min_size=2, max_size=5, unique=True)


@given(tasks=task_names, variants=variant_sets, rounds=st.integers(1, 3), extra=st.integers(0, 4), seed=seeds)
@settings(max_examples=80, deadline=None)
def test_n_variants_take_each_position_equally_often_where_the_repetitions_allow(tasks, variants, rounds, extra, seed):
    """The seeded shuffle, rotated by the repetition, is a cyclic Latin square: over
    every run of len(variants) repetitions of a task, each variant holds each position
    once; over any count, no variant holds a position more than once more than another."""
    extra %= len(variants)
    repetitions = rounds * len(variants) + extra
    schedule = build_schedule(tasks, repetitions, seed, variants)
    for task in tasks:
        pairs = [[t.variant for t in sorted(schedule, key=lambda t: t.pair_order) if t.task == task and t.repetition == r] for r in range(1, repetitions + 1)]
        assert all(sorted(pair) == sorted(variants) for pair in pairs)  # one trial per variant in every pair
        for position in range(len(variants)):
            held = Counter(pair[position] for pair in pairs)
            assert set(held) <= set(variants)
            counts = [held.get(v, 0) for v in variants]
            assert max(counts) - min(counts) <= 1
            if extra == 0:
                assert counts == [rounds] * len(variants)


@given(tasks=task_names, repetitions=st.integers(1, 6), seed=seeds)
@settings(max_examples=60, deadline=None)
def test_trials_are_interleaved_by_pair(tasks, repetitions, seed):
    schedule = build_schedule(tasks, repetitions, seed)
    assert [t.position for t in schedule] == list(range(len(tasks) * repetitions * 2))
    for first, second in zip(schedule[0::2], schedule[1::2]):
        assert first.pair_id == second.pair_id
        assert (first.pair_order, second.pair_order) == (0, 1)
        assert {first.variant, second.variant} == set(VARIANTS)
        assert (first.task, first.repetition) == (second.task, second.repetition)
    # Never all of one variant first: every pair holds both, back to back.
    assert len({t.pair_id for t in schedule}) == len(schedule) // 2


def test_ids_are_stable_and_record_task_variant_repetition_and_order():
    schedule = build_schedule(["alpha", "beta"], 2, seed=107)
    assert [t.pair_id for t in schedule[::2]] == ["alpha/r1", "beta/r1", "alpha/r2", "beta/r2"]
    for trial in schedule:
        assert trial.pair_id == pair_id(None, trial.task, trial.repetition)
        assert trial.trial_id == f"{trial.pair_id}/{trial.variant}"
    assert len({t.trial_id for t in schedule}) == len(schedule)


def test_repetitions_run_task_by_task_within_each_round():
    schedule = build_schedule(["a", "b", "c"], 2, seed=1)
    assert [(t.repetition, t.task) for t in schedule[::2]] == [(1, "a"), (1, "b"), (1, "c"), (2, "a"), (2, "b"), (2, "c")]


def test_the_seed_chooses_the_initial_order():
    firsts = {variant_order(seed, "task", 1)[0] for seed in range(40)}
    assert firsts == set(VARIANTS)
    assert variant_order(7, "task", 1) == variant_order(7, "task", 1)
    assert variant_order(7, "task", 2) == tuple(reversed(variant_order(7, "task", 1)))


def test_provider_prefix_keeps_ids_distinct_across_providers():
    schedule = build_schedule(["a"], 1, seed=3, providers=("zai", "openai-codex"))
    assert [t.pair_id for t in schedule[::2]] == ["zai/a/r1", "openai-codex/a/r1"]
    assert len({t.trial_id for t in schedule}) == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tasks": ["a"], "repetitions": 0}, "positive"),
        ({"tasks": ["a", "a"], "repetitions": 1}, "task is listed twice"),
        ({"tasks": ["a"], "repetitions": 1, "variants": ("coding", "coding")}, "variant is listed twice"),
        ({"tasks": ["a"], "repetitions": 1, "variants": ()}, "at least one variant"),
    ],
)
def test_invalid_schedules_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_schedule(seed=1, **kwargs)
