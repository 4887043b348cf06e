"""The bounded words the engine records and reports: one source for every enum.

Reports are built from an allowlist, so a value outside these tuples can never
reach a shared report; keeping them here means the lanes and the report's
schema cannot drift apart.
"""

from __future__ import annotations

from campaign.agents.record import ERROR_CLASSES

OUTCOMES = ("passed", "failed", "timeout", "interrupted")

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
)
