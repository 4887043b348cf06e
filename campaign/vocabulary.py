"""The bounded words the engine records and reports: one source for every enum.

Reports are built from an allowlist, so a value outside these tuples can never
reach a shared report; keeping them here means the lanes and the report's
schema cannot drift apart.
"""

from __future__ import annotations

from campaign.agents.record import ERROR_CLASSES

# An attempt's outcome. The first three are verdicts, the agent's under its variant;
# the rest end an attempt without one (DESIGN.md §9: whose fault is it): the
# operator stopped it, the provider failed it (seen on the wire), or the engine did.
VERDICTS = ("passed", "failed", "timeout")
NO_VERDICT = ("interrupted", "provider_error", "engine_error")
OUTCOMES = VERDICTS + NO_VERDICT

# What the provider did, per model request, as the recording proxy saw it. Bounded
# keys of schema_diagnostics.provider_faults, and the failure_class of an attempt
# the provider ended (the fault of its last model request).
PROVIDER_FAULTS = (
    "http_429",  # rate limited
    "http_529",  # overloaded (Anthropic's 529, or an overloaded_error event mid-stream)
    "http_5xx",  # any other server error, and 408
    "http_auth",  # 401 / 403: the credential was refused (the operator's to fix, not the agent's)
    "unreachable",  # the upstream refused or never accepted the connection
    "connection_reset",  # the connection dropped before a response began
    "stream_cut",  # the response began, then ended without the format's end
    "upstream_silent",  # no byte from the upstream within the provider's silence bound
)
# How each fault reads in a line for the operator.
PROVIDER_FAULT_WORDS = {
    "http_429": "HTTP 429",
    "http_529": "HTTP 529",
    "http_5xx": "HTTP 5xx",
    "http_auth": "HTTP 401/403",
    "unreachable": "upstream unreachable",
    "connection_reset": "connection reset",
    "stream_cut": "cut stream",
    "upstream_silent": "silent upstream",
}

FAILURE_CLASSES = (
    "profile_gate",
    "runtime_boot_failed",
    "profiler_unavailable",
    "timeout",
    *sorted(ERROR_CLASSES),
    "workspace_tampered",
    "verifier_timeout",
    "verifier_failed",
    "no_failed_tool_call",
    "profile_unconfirmed",
    "interrupted",
    "engine_error",
    # Workers: a worker stopped heartbeating mid-attempt (its provider halts), or this
    # runner's lease was halted or taken by another.
    "worker_lost",
    "lease_lost",
    *PROVIDER_FAULTS,
)

# Why a lane stopped admitting trials; also each not_attempted trial's reason.
STOP_REASONS = (
    "spend_limit",
    "attempt_exceeded_ceiling",
    "spend_incomplete",
    "run_deadline",
    "max_attempts",
    "cleanup_unverified",
    "disposal_failed",
    "finalization_failed",
    "interrupted",
    "engine_error",
    # A provider's upstream refused connections, or K attempts in a row ended on its
    # faults: that provider is halted, its trials stay schedulable for --resume.
    "provider_unavailable",
    # A trial whose attempts ended on provider faults this many times gets no more.
    "fault_attempts_exhausted",
)
