"""One agent run, as its output adapter observed it.

Every counter is ``int | None``: ``None`` means the client did not show it to us,
and nothing downstream may read ``None`` as zero. Adapters normalise so that
``uncached_input_tokens`` never contains cached tokens, whatever convention the
client uses, and say which convention it was in ``input_includes_cached``.
The record holds no free text from the agent (no prompts, output, or error
messages): only session ids, model names, code-authored classes and numbers, so
it is safe to store and to report.

``error_class == "unparseable_output"`` has two shapes: unreadable output (every
counter None), or a JSON Lines stream cut short by a kill, where the counters
are what the complete lines showed before the cut: observed, but lower bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from campaign.vocabulary import ERROR_CLASSES, RECORD_COUNTERS

# One of vocabulary.ERROR_CLASSES (checked when a record is made).
ErrorClass = str


class TurnUsage(NamedTuple):
    """Usage of one completed parent turn, keyed by the identities that prove it.

    ``request_id`` names the model request, ``usage_id`` the terminal usage
    observation that closed it (None: a request seen without terminal usage,
    which keeps the turns unmatched). ``input_tokens`` is uncached input,
    normalised exactly like the record's ``uncached_input_tokens``.
    """

    request_id: str | None
    usage_id: str | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None


@dataclass(frozen=True)
class AgentRecord:
    completed_turns: int | None = None
    uncached_input_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    output_tokens: int | None = None
    tool_calls: int | None = None
    tool_errors: int | None = None
    # A number with cost_reported=False is a partial sum (some steps had no cost).
    cost_usd: float | None = None
    cost_reported: bool = False
    session_id: str | None = None
    model: str | None = None
    error_class: ErrorClass | None = None
    applied_profiles: tuple[str, ...] | None = None
    diagnostic_events_version: int | None = None
    discovery_failures: int | None = None
    incorrect_tool_calls: int | None = None
    turn_usage: tuple[TurnUsage, ...] | None = None
    schema_diagnostics: dict[str, Any] | None = None
    nested_sessions_observed: bool | None = None
    # The client's own convention, kept so a stored row explains its normalisation.
    input_includes_cached: bool | None = None
    # Set by the offline agent: every figure in this record is test data.
    synthetic: bool = False
    # Model requests the recording proxy saw (None: none watched this client). With no
    # billed turn among them, each was an error response without usage, or never connected.
    wire_requests: int | None = None

    def __post_init__(self) -> None:
        # Cheap guards against adapter bugs that would silently corrupt reports.
        if self.error_class is not None and self.error_class not in ERROR_CLASSES:
            raise ValueError(f"unknown error class {self.error_class!r}")
        for name in RECORD_COUNTERS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"{name} must be a non-negative int or None, got {value!r}")
        if self.cost_usd is not None and not (math.isfinite(self.cost_usd) and self.cost_usd >= 0):
            raise ValueError(f"cost_usd must be finite and non-negative, got {self.cost_usd!r}")




def unknown_record(error_class: ErrorClass | None, *, input_includes_cached: bool | None = None) -> AgentRecord:
    """The record for output we could not read: a failure class and nothing else."""
    return AgentRecord(error_class=error_class, input_includes_cached=input_includes_cached)


def with_error(record: AgentRecord, error_class: ErrorClass | None) -> AgentRecord:
    """Keep an earlier (more specific) class; only fill in a missing one."""
    if record.error_class is not None or error_class is None:
        return record
    return replace(record, error_class=error_class)


def uncached_input(input_tokens: int | None, cached: int | None, input_includes_cached: bool) -> int | None:
    """Uncached input from a client's input figure, never double counting cache reads.

    When the client folds cached tokens into its input figure, the uncached part
    is the difference; without the cached figure it is unknown, and a cached
    figure larger than the input means the numbers disagree, so also unknown.
    """
    if input_tokens is None:
        return None
    if not input_includes_cached:
        return input_tokens
    if cached is None or cached > input_tokens:
        return None
    return input_tokens - cached


def turn_usage_matched(record: AgentRecord) -> bool:
    """Whether every completed parent turn has one-to-one matched, numeric usage.

    This is the adapter's half of the spec's ``spend_complete`` (the engine adds
    cost and profiler flush): the turn count is known, each turn carries its own
    distinct request and usage identities with numeric input/output/cache-read
    counters, and no nested session could have spent outside the parent's figures.
    An empty observation (no turn at all) proves nothing, so it is not matched.
    """
    turns = record.turn_usage
    if not turns or record.completed_turns is None or record.nested_sessions_observed is not False:
        return False
    if len(turns) != record.completed_turns:
        return False
    request_ids = [t.request_id for t in turns]
    usage_ids = [t.usage_id for t in turns]
    if None in request_ids or None in usage_ids:
        return False
    if len(set(request_ids)) != len(turns) or len(set(usage_ids)) != len(turns):
        return False
    return all(None not in (t.input_tokens, t.output_tokens, t.cache_read_tokens) for t in turns)


def nothing_billed(record: AgentRecord) -> bool:
    """Whether the wire proved that the provider billed nothing: it saw the client's model
    requests (all of them, flushed) and not one was billed (each an HTTP error response
    without usage, or no connection at all). A proven zero, unlike an empty observation,
    which proves nothing."""
    return bool(record.wire_requests) and record.turn_usage == () and record.completed_turns == 0 and record.nested_sessions_observed is False


def record_to_json(record: AgentRecord) -> dict[str, Any]:
    """Plain JSON values for the store (tuples become lists, turn usage becomes objects)."""
    out: dict[str, Any] = {}
    for name in AgentRecord.__dataclass_fields__:
        value = getattr(record, name)
        if name == "turn_usage" and value is not None:
            value = [t._asdict() for t in value]
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    return out
