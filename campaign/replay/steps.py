"""The abstract steps a replay script is made of, and the usage each one reports.

A step says *what* the fake model wants done (read a file, run a command, ...),
never *how*: the client decides which tools exist, and ``tools.py`` maps a step
onto them per request. Usage is part of the step so a test can predict, to the
token, what a whole conversation reports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    """Token counts for one model response, split the way providers bill them."""

    uncached_input: int
    cached_input: int
    cache_write: int
    output: int

    @property
    def prompt_total(self) -> int:
        """Every input token, cached or not: what OpenAI reports as prompt/input tokens."""
        return self.uncached_input + self.cached_input + self.cache_write

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.uncached_input + other.uncached_input,
            self.cached_input + other.cached_input,
            self.cache_write + other.cache_write,
            self.output + other.output,
        )


ZERO = Usage(0, 0, 0, 0)


def usage_for_step(index: int) -> Usage:
    """Deterministic, pairwise-distinct counts for the step at ``index`` (0-based).

    The four fields never coincide for a realistic script length, so a test that
    swapped two of them (say cached for uncached) fails instead of passing by luck.
    """
    return Usage(
        uncached_input=101 + 10 * index,
        cached_input=311 + 1000 * index,
        cache_write=257 + 5 * index,
        output=41 + 3 * index,
    )


@dataclass(frozen=True)
class ReadFile:
    path: str
    usage: Usage


@dataclass(frozen=True)
class WriteFile:
    path: str
    content: str
    usage: Usage


@dataclass(frozen=True)
class EditFile:
    path: str
    old: str
    new: str
    usage: Usage


@dataclass(frozen=True)
class Run:
    """A shell command; ``expect_failure`` marks one the script means to fail."""

    command: str
    usage: Usage
    expect_failure: bool = False


@dataclass(frozen=True)
class Finish:
    text: str
    usage: Usage


Step = ReadFile | WriteFile | EditFile | Run | Finish


def total_usage(steps: tuple[Step, ...] | list[Step]) -> Usage:
    total = ZERO
    for step in steps:
        total = total + step.usage
    return total
