"""Live campaign progress on stderr: one status block redrawn in place, or plain lines.

The runner feeds plain events (``AttemptFinished``, ``TrialsNotAttempted``);
this module only formats them. Per provider it shows done/total, verified
passes per variant, measured spend so far against the cap, and an ETA; a header
line sums the providers and adds the elapsed time.

On a terminal the block is redrawn in place (cursor up, clear line); anywhere
else (a pipe, a log file, ``TERM=dumb``) each finished attempt prints one plain
line and nothing is ever redrawn. The stream, its TTY-ness and the clock are
injectable, and every ``format_*``/``*_line`` function is pure.

Unknown stays unknown: an attempt whose spend is not known makes the spend
figure a partial sum shown as ``$0.1200+?``, no spend known at all is ``?``,
and an ETA without any timed attempt is ``?``. ETA = attempts left (neither done
nor recorded not attempted) x the mean duration of the timed attempts: the
provider's own mean when it has one, otherwise the mean over all providers.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

_CURSOR_UP = "\x1b[{n}F"  # cursor to the start of the line n lines up
_CLEAR_LINE = "\r\x1b[2K"


@dataclass(frozen=True)
class ProviderPlan:
    name: str
    total: int
    # This provider's spend cap in USD; None: none of its own.
    cap_usd: float | None = None


@dataclass(frozen=True)
class AttemptFinished:
    provider: str
    variant: str
    # Independently verified pass; None: no verdict (counts as not passed).
    passed: bool | None
    # The attempt's spend as the caps count it (measured where complete, else the
    # list-price equivalent); None: unknown.
    spend_usd: float | None
    # How long the attempt took, start to recorded row; None: use the clock.
    seconds: float | None = None
    trial_id: str | None = None
    # The outcome word when there is no verdict (provider_error, engine_error, ...).
    outcome: str | None = None
    # The spend is a lower bound (incomplete): shown with "+?".
    spend_partial: bool = False


@dataclass(frozen=True)
class TrialsNotAttempted:
    provider: str
    count: int = 1
    reason: str | None = None


@dataclass(frozen=True)
class SpentBefore:
    """An attempt of a campaign this one continues whose result was not carried over:
    its spend counts (the caps read the whole lineage), its verdict does not."""

    provider: str
    # As AttemptFinished's: the caps' count, None when unknown, ``spend_partial`` a lower bound.
    spend_usd: float | None
    spend_partial: bool = False


Event = AttemptFinished | TrialsNotAttempted | SpentBefore


@dataclass
class ProviderState:
    name: str
    total: int
    cap_usd: float | None = None
    done: int = 0
    not_attempted: int = 0
    # Attempts without a verdict (the provider or the engine ended them): their trials run again.
    no_verdict: int = 0
    # variant -> [passes, attempts]
    passes: dict[str, list[int]] = field(default_factory=dict)
    spend_usd: float = 0.0
    spend_known: int = 0
    spend_unknown: int = 0
    durations: list[float] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.done - self.not_attempted)

    def mean_seconds(self) -> float | None:
        return sum(self.durations) / len(self.durations) if self.durations else None

    def apply(self, event: Event, seconds: float | None) -> None:
        if isinstance(event, TrialsNotAttempted):
            self.not_attempted += event.count
            return
        if isinstance(event, SpentBefore):
            self._spent(event.spend_usd, event.spend_partial)
            return
        if event.passed is None and event.outcome:
            self.no_verdict += 1
        else:
            self.done += 1
            tally = self.passes.setdefault(event.variant, [0, 0])
            tally[0] += event.passed is True
            tally[1] += 1
        self._spent(event.spend_usd, event.spend_partial)
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            self.durations.append(seconds)

    def _spent(self, usd: float | None, partial: bool) -> None:
        if usd is None:
            self.spend_unknown += 1
        else:
            self.spend_usd += usd
            self.spend_known += 1
            self.spend_unknown += partial


# --- pure formatting --------------------------------------------------------------


def format_duration(seconds: float | None) -> str:
    """``?`` when unknown; ``45s``, ``3m05s``, ``2h04m`` otherwise."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def format_usd(amount: float | None) -> str:
    if amount is None:
        return "?"
    return f"${amount:,.2f}" if abs(amount) >= 10 else f"${amount:.4f}"


# A figure held to a cap elsewhere (a provider under the campaign's total cap): no "/..." part.
UNDER_OTHER_CAP = -1.0


def format_spend(spent: float | None, *, partial: bool, cap: float | None) -> str:
    """Spend against the cap: ``$0.1200/$5.00``, ``$0.1200+?/no cap``, ``?/$5.00``;
    with ``cap=UNDER_OTHER_CAP`` (capped elsewhere) just ``$0.1200``."""
    shown = format_usd(spent)
    if partial and spent is not None:
        shown += "+?"
    if cap == UNDER_OTHER_CAP:
        return shown
    return f"{shown}/{f'${cap:,.2f}' if cap is not None else 'no cap'}"


def mean_seconds(states: Iterable[ProviderState]) -> float | None:
    """Mean duration over every timed attempt of ``states``; None when none was timed."""
    every = [d for s in states for d in s.durations]
    return sum(every) / len(every) if every else None


def eta_seconds(states: Iterable[ProviderState], *, fallback_mean: float | None = None) -> float | None:
    """Time the remaining attempts will take; None when some remaining work has no estimate.

    Each provider's remaining attempts use its own mean duration, else the mean
    over all ``states``, else ``fallback_mean``.
    """
    states = list(states)
    overall = mean_seconds(states)
    overall = fallback_mean if overall is None else overall
    total = 0.0
    for state in states:
        if state.remaining == 0:
            continue
        mean = state.mean_seconds()
        mean = overall if mean is None else mean
        if mean is None:
            return None
        total += state.remaining * mean
    return total


def _spend_of(states: Sequence[ProviderState]) -> tuple[float | None, bool]:
    known = sum(s.spend_known for s in states)
    unknown = sum(s.spend_unknown for s in states)
    if known == 0:
        return (None if unknown else 0.0), unknown > 0
    return sum(s.spend_usd for s in states), unknown > 0


def _tallies(state: ProviderState, variants: Sequence[str]) -> list[tuple[str, int, int]]:
    """(variant, passes, attempts): the named variants first, then any other seen."""
    return [(v, *state.passes.get(v, (0, 0))) for v in list(variants) + sorted(set(state.passes) - set(variants))]


def provider_line(state: ProviderState, variants: Sequence[str], *, fallback_mean: float | None = None, compact: int = 0) -> str:
    """``zai  7/24 done  baseline 3/4 pass  coding 2/3 pass  spend $0.1200/$5.00  eta 12m30s``.

    For a narrow terminal, ``compact=1`` is ``zai 7/24 (1 not run) pass baseline 3/4
    coding 2/3 $0.1200/$5.00 eta 12m30s``; ``compact=2`` also leaves out the
    not-attempted count (the header line still shows the campaign's).
    """
    spent, partial = _spend_of([state])
    spend = format_spend(spent, partial=partial, cap=state.cap_usd)
    eta = f"eta {format_duration(eta_seconds([state], fallback_mean=fallback_mean))}"
    if compact:
        skipped = [f"({state.not_attempted} not run)"] if state.not_attempted and compact < 2 else []
        return " ".join([state.name, f"{state.done}/{state.total}", *skipped, "pass", *(f"{v} {p}/{a}" for v, p, a in _tallies(state, variants)), spend, eta])
    parts = [state.name, f"{state.done}/{state.total} done"]
    if state.not_attempted:
        parts.append(f"{state.not_attempted} not attempted")
    if state.no_verdict:
        parts.append(f"{state.no_verdict} no verdict")
    parts += [f"{v} {p}/{a} pass" for v, p, a in _tallies(state, variants)]
    parts += [f"spend {spend}", eta]
    return "  ".join(parts)


def header_line(states: Sequence[ProviderState], *, elapsed: float, cap_usd: float | None, compact: int = 0) -> str:
    """``campaign  9/48 done  spend $0.3100/$10.00  elapsed 5m10s  eta 20m00s``.

    ``compact`` (a narrow terminal): ``campaign 9/48 (2 not run) $0.3100/$10.00 elapsed 5m10s eta 20m00s``.
    """
    done = sum(s.done for s in states)
    total = sum(s.total for s in states)
    skipped = sum(s.not_attempted for s in states)
    spent, partial = _spend_of(states)
    spend = format_spend(spent, partial=partial, cap=cap_usd)
    times = [f"elapsed {format_duration(elapsed)}", f"eta {format_duration(eta_seconds(states))}"]
    if compact:
        return " ".join(["campaign", f"{done}/{total}", *([f"({skipped} not run)"] if skipped else []), spend, *times])
    parts = ["campaign", f"{done}/{total} done"]
    if skipped:
        parts.append(f"{skipped} not attempted")
    parts += [f"spend {spend}", *times]
    return "  ".join(parts)


def render_block(states: Sequence[ProviderState], variants: Sequence[str], *, elapsed: float, cap_usd: float | None, width: int | None = None) -> list[str]:
    """The status block: the header, then one indented line per provider.

    With a terminal ``width`` each line takes its most complete form that fits
    (full labels, then compact ones), and is cut only when even that is too long.
    """
    overall = mean_seconds(states)

    def shortest_fitting(render: Callable[[int], str], levels: int) -> str:
        for level in range(levels):
            line = render(level)
            if width is None or len(line) <= max(1, width - 1):
                return line
        return fit(line, width) if width is not None else line

    header = shortest_fitting(lambda level: header_line(states, elapsed=elapsed, cap_usd=cap_usd, compact=level), 2)
    lines = [shortest_fitting(lambda level, s=s: "  " + provider_line(s, variants, fallback_mean=overall, compact=level), 3) for s in states]
    return [header, *lines]


def fit(line: str, width: int) -> str:
    """Cut ``line`` to fit a terminal ``width`` columns wide, marking the cut."""
    limit = max(1, width - 1)
    return line if len(line) <= limit else line[: max(0, limit - 3)] + "..."


def attempt_line(event: AttemptFinished, state: ProviderState, all_states: Sequence[ProviderState], *, elapsed: float, cap_usd: float | None) -> str:
    """The plain line for one finished attempt (non-TTY output)."""
    verdict = event.outcome if event.passed is None and event.outcome else {True: "pass", False: "fail", None: "no verdict"}[event.passed]
    trial = f" {event.trial_id}" if event.trial_id else ""
    spent, partial = _spend_of(all_states)
    return (
        f"progress: {state.name} {state.done}/{state.total}{trial} {event.variant} {verdict}"
        f"  attempt spend {format_usd(event.spend_usd)}"
        f"  campaign {sum(s.done for s in all_states)}/{sum(s.total for s in all_states)}"
        f"  spend {format_spend(spent, partial=partial, cap=cap_usd)}"
        f"  elapsed {format_duration(elapsed)}  eta {format_duration(eta_seconds(all_states))}"
    )


def skipped_line(event: TrialsNotAttempted, state: ProviderState) -> str:
    reason = f" ({event.reason})" if event.reason else ""
    return f"progress: {state.name} {event.count} trial(s) not attempted{reason}; {state.remaining} left"


# --- the renderer -----------------------------------------------------------------


def stream_is_tty(stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """A terminal that understands cursor movement (not a pipe, not TERM=dumb)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and environ.get("TERM", "") != "dumb"


class Progress:
    """Feeds events to a status block (TTY) or to plain lines (anything else)."""

    def __init__(
        self,
        plans: Sequence[ProviderPlan],
        variants: Sequence[str],
        *,
        cap_usd: float | None = None,
        stream: TextIO | None = None,
        isatty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        width: int | None = None,
    ) -> None:
        names = [p.name for p in plans]
        if len(set(names)) != len(names):
            raise ValueError("provider names must be unique")
        self.states = [ProviderState(p.name, p.total, p.cap_usd) for p in plans]
        self._by_name = {s.name: s for s in self.states}
        self.variants = tuple(variants)
        self.cap_usd = cap_usd
        self.stream = stream if stream is not None else sys.stderr
        self.tty = stream_is_tty(self.stream) if isatty is None else isatty
        self.clock = clock
        # Block lines are cut to the terminal width: a wrapped line would break the redraw.
        self.width = width
        self._started = clock()
        self._last_event = self._started
        self._drawn = 0
        self._broken = False

    @property
    def elapsed(self) -> float:
        return self.clock() - self._started

    def preload(self, events: Iterable[Event]) -> None:
        """Count work finished before this run (a resume) without printing it."""
        for event in events:
            self._state(event.provider).apply(event, event.seconds if isinstance(event, AttemptFinished) else None)

    def start(self) -> None:
        """Draw the first block (TTY only)."""
        if self.tty:
            self._draw()

    def update(self, event: Event) -> None:
        state = self._state(event.provider)
        now = self.clock()
        if isinstance(event, AttemptFinished):
            seconds = event.seconds if event.seconds is not None else now - self._last_event
            self._last_event = now
            state.apply(event, seconds)
        else:
            state.apply(event, None)
        if self.tty:
            self._draw()
        elif isinstance(event, AttemptFinished):
            self._write(attempt_line(event, state, self.states, elapsed=self.elapsed, cap_usd=self.cap_usd) + "\n")
        else:
            self._write(skipped_line(event, state) + "\n")

    def tick(self) -> None:
        """Refresh elapsed/ETA on a terminal; nothing otherwise."""
        if self.tty:
            self._draw()

    def message(self, text: str) -> None:
        """A line of its own above the block (the block is redrawn below it)."""
        if self.tty and self._drawn:
            self._write(_CURSOR_UP.format(n=self._drawn) + "\x1b[J")
            self._drawn = 0
            self._write(text.rstrip("\n") + "\n")
            self._draw()
        else:
            self._write(text.rstrip("\n") + "\n")

    def close(self) -> None:
        """Leave the final block on screen (TTY) or print a closing summary line."""
        if self.tty:
            self._draw()
        else:
            self._write("progress: " + header_line(self.states, elapsed=self.elapsed, cap_usd=self.cap_usd) + "\n")

    def _state(self, provider: str) -> ProviderState:
        try:
            return self._by_name[provider]
        except KeyError:
            raise ValueError(f"provider {provider!r} is not in this campaign") from None

    def _draw(self) -> None:
        width = self.width or shutil.get_terminal_size().columns
        lines = render_block(self.states, self.variants, elapsed=self.elapsed, cap_usd=self.cap_usd, width=width)
        out = _CURSOR_UP.format(n=self._drawn) if self._drawn else ""
        out += "".join(_CLEAR_LINE + line + "\n" for line in lines)
        self._drawn = len(lines)
        self._write(out)

    def _write(self, text: str) -> None:
        # A closed or broken stderr must never stop a campaign: the display just goes quiet.
        if self._broken:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self._broken = True
