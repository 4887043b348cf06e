"""Ordering targets so that each is built after everything it depends on."""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Mapping


class CycleError(ValueError):
    """The plan has a dependency cycle; ``targets`` are the targets that could not be
    ordered (the cycle and everything waiting on it), in declaration order."""

    def __init__(self, targets: list[Hashable]) -> None:
        super().__init__("dependency cycle among: " + ", ".join(map(str, targets)))
        self.targets = targets


def execution_order(deps: Mapping[Hashable, Iterable[Hashable]]) -> list[Hashable]:
    """Every target, each one after all of its dependencies.

    ``deps`` maps a target to the targets it depends on. A dependency that is not
    itself a key of ``deps`` is a target without dependencies.

    The order is deterministic: targets are *declared* in order of first mention
    when reading ``deps`` (each key, then its dependencies, in iteration order),
    and at every step the earliest-declared target whose dependencies are all
    built comes next.

    Raises CycleError when some targets can never be built.

    Kahn's algorithm over declaration indices with a min-heap of ready targets:
    O((targets + edges) log targets), and each target is hashed a constant number
    of times per mention.
    """
    index: dict[Hashable, int] = {}
    declared: list[Hashable] = []
    requires_of: list[list[int]] = []
    for target, requires in deps.items():
        requires = list(requires)
        for node in (target, *requires):
            if node not in index:
                index[node] = len(declared)
                declared.append(node)
                requires_of.append([])
        # A dependency listed twice counts once.
        requires_of[index[target]] = list(dict.fromkeys(index[node] for node in requires))

    waiting_on = [len(requires) for requires in requires_of]
    dependents: list[list[int]] = [[] for _ in declared]
    for position, requires in enumerate(requires_of):
        for dependency in requires:
            dependents[dependency].append(position)

    ready = [position for position, count in enumerate(waiting_on) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        position = heapq.heappop(ready)
        order.append(position)
        for dependent in dependents[position]:
            waiting_on[dependent] -= 1
            if waiting_on[dependent] == 0:
                heapq.heappush(ready, dependent)

    if len(order) < len(declared):
        done = set(order)
        raise CycleError([node for position, node in enumerate(declared) if position not in done])
    return [declared[position] for position in order]
