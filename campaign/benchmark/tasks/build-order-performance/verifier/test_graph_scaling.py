"""Hidden checks: exact order semantics, and work that grows linearly.

Work is measured by counting the hash and equality operations performed on the
targets themselves (every membership test, dict lookup or list scan does at least
one), never by wall-clock time, so the verdict does not depend on machine load.
"""

import heapq
import random
import unittest

from buildplan import CycleError, execution_order


class BudgetExceeded(Exception):
    pass


class Meter:
    def __init__(self):
        self.ops = 0
        self.budget = None

    def tick(self):
        self.ops += 1
        if self.budget is not None and self.ops > self.budget:
            raise BudgetExceeded(f"more than {self.budget} hash/equality operations on targets")


METER = Meter()


class Target:
    """A target name whose hashing and comparisons are counted."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        METER.tick()
        return hash(self.name)

    def __eq__(self, other):
        METER.tick()
        if not isinstance(other, Target):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        return f"Target({self.name!r})"

    def __str__(self):
        return self.name


def reference_order(deps):
    """Same semantics as the documented behaviour, on plain strings."""
    index, declared = {}, []
    for target, requires in deps.items():
        for node in [target, *requires]:
            if node not in index:
                index[node] = len(declared)
                declared.append(node)
    pending = [set() for _ in declared]
    dependents = [[] for _ in declared]
    for target, requires in deps.items():
        for node in requires:
            if index[node] not in pending[index[target]]:
                pending[index[target]].add(index[node])
                dependents[index[node]].append(index[target])
    ready = [i for i, p in enumerate(pending) if not p]
    heapq.heapify(ready)
    out = []
    while ready:
        i = heapq.heappop(ready)
        out.append(i)
        for j in dependents[i]:
            pending[j].discard(i)
            if not pending[j]:
                heapq.heappush(ready, j)
    if len(out) < len(declared):
        seen = set(out)
        return None, [declared[i] for i in range(len(declared)) if i not in seen]
    return [declared[i] for i in out], None


def random_plan(rng, targets, edges, cycle=False):
    """A layered random DAG (optionally with one back edge), names in shuffled order."""
    names = [f"t{i:05d}" for i in range(targets)]
    deps = {name: [] for name in names}
    for _ in range(edges):
        a, b = sorted(rng.sample(range(targets), 2))
        deps[names[b]].append(names[a])
    # Some dependencies that are never declared as keys.
    for i in range(0, targets, 50):
        deps[names[i]].append(f"ext{i:05d}")
    if cycle:
        deps[names[targets // 3]].append(names[(2 * targets) // 3])
        deps[names[(2 * targets) // 3]].append(names[targets // 3 + 1])
        deps[names[targets // 3 + 1]].append(names[targets // 3])
    keys = list(deps)
    rng.shuffle(keys)
    return {key: deps[key] for key in keys}


def as_targets(plan):
    """Same plan with counted targets; each mention is a distinct but equal object."""
    return {Target(key): [Target(dep) for dep in deps] for key, deps in plan.items()}


class SemanticsTest(unittest.TestCase):
    def test_documented_examples(self):
        self.assertEqual(execution_order({"app": ["lib", "assets"], "lib": ["core"], "assets": [], "core": []}), ["assets", "core", "lib", "app"])
        self.assertEqual(execution_order({"z": [], "a": [], "m": ["z"]}), ["z", "a", "m"])
        self.assertEqual(execution_order({"docs": ["b", "a"], "b": ["c"], "a": []}), ["a", "c", "b", "docs"])
        self.assertEqual(execution_order({"x": ["y", "w"]}), ["y", "w", "x"])
        self.assertEqual(execution_order({}), [])

    def test_duplicate_dependency(self):
        self.assertEqual(execution_order({"a": ["b", "b"], "b": []}), ["b", "a"])

    def test_late_key_for_early_dependency(self):
        deps = {"top": ["mid", "leaf"], "leaf": [], "mid": ["leaf", "other"], "other": ["leaf"]}
        self.assertEqual(execution_order(deps), ["leaf", "other", "mid", "top"])

    def test_cycles(self):
        with self.assertRaises(CycleError) as caught:
            execution_order({"ok": [], "a": ["b"], "b": ["c"], "c": ["a"], "top": ["a", "ok"]})
        self.assertEqual(caught.exception.targets, ["a", "b", "c", "top"])
        with self.assertRaises(CycleError) as caught:
            execution_order({"a": ["a"], "b": []})
        self.assertEqual(caught.exception.targets, ["a"])
        self.assertIsInstance(caught.exception, ValueError)

    def test_random_plans_match_reference(self):
        rng = random.Random(1337)
        for trial in range(60):
            plan = random_plan(rng, rng.randrange(2, 40), rng.randrange(0, 80), cycle=trial % 4 == 0 and trial > 0)
            expected, cycle = reference_order(plan)
            with self.subTest(trial=trial):
                if cycle is None:
                    self.assertEqual(execution_order(plan), expected)
                else:
                    with self.assertRaises(CycleError) as caught:
                        execution_order(plan)
                    self.assertEqual(caught.exception.targets, cycle)

    def test_non_string_targets(self):
        self.assertEqual(execution_order({3: [1, 2], 2: [1], (0, 1): [3]}), [1, 2, 3, (0, 1)])


class ScalingTest(unittest.TestCase):
    """Large plans: at most OPS_PER_ITEM operations per target and per edge."""

    OPS_PER_ITEM = 40

    def run_counted(self, plan):
        counted = as_targets(plan)
        items = len(plan) + sum(len(deps) for deps in plan.values())
        METER.ops, METER.budget = 0, self.OPS_PER_ITEM * items
        try:
            return execution_order(counted)
        finally:
            METER.budget = None

    def test_large_plan_order_and_work(self):
        plan = random_plan(random.Random(42), 5000, 20000)
        expected, _ = reference_order(plan)
        result = self.run_counted(plan)
        self.assertEqual([target.name for target in result], expected)

    def test_large_chain(self):
        names = [f"step{i:05d}" for i in range(6000)]
        plan = {names[i]: [names[i - 1]] if i else [] for i in reversed(range(len(names)))}
        result = self.run_counted(plan)
        self.assertEqual([target.name for target in result], names)

    def test_large_plan_with_cycle(self):
        plan = random_plan(random.Random(7), 4000, 12000, cycle=True)
        _, cycle = reference_order(plan)
        self.assertTrue(cycle)
        with self.assertRaises(CycleError) as caught:
            self.run_counted(plan)
        self.assertEqual([target.name for target in caught.exception.targets], cycle)


if __name__ == "__main__":
    unittest.main()
