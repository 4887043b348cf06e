"""The bounded words the engine records and reports: one source for every word list.

Reports are built from an allowlist, so a value outside these tuples can never
reach a shared report; keeping them here means the lanes, the store's checks
and the report's schema cannot drift apart. This module is the ground floor:
it imports nothing of the engine, and everything else imports it.
"""

from __future__ import annotations

# --- the experiment ---------------------------------------------------------------------

VARIANTS = ("baseline", "coding")
BASELINE, CODING = VARIANTS
# The disclosure profile each variant asks for ([runtime.tools.disclosure] profile).
DISCLOSURE_PROFILES = ("legacy", "coding")
VARIANT_PROFILES = {"baseline": "legacy", "coding": "coding"}

# --- the store's rows --------------------------------------------------------------------

CAMPAIGN_KINDS = ("paired", "campaign", "nonpaired")
CAMPAIGN_STATES = ("planned", "running", "stopped", "completed", "interrupted")
TRIAL_STATUSES = ("scheduled", "admitted", "finished", "not_attempted")
# finished: the attempt has a verdict. interrupted (the operator stopped it) and
# faulted (the provider or the engine ended it) carry none: their trial goes back
# to the queue and gets a fresh attempt.
ATTEMPT_STATUSES = ("running", "finished", "interrupted", "faulted")
LEDGER_ROLES = ("runtime", "client", "verifier", "fixture", "descendant", "profiler", "provider")

# --- counters (every one nullable: unknown is NULL, never 0) ------------------------------

# What a price is paid on, in price order (a providers catalog's prices).
SPEND_COUNTERS = ("uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
# The same, as a catalog's price keys and the capture's usage keys name them.
PRICE_CATEGORIES = tuple(c.removesuffix("_tokens") for c in SPEND_COUNTERS)
# The usage keys of the generic JSON format (agents/GENERIC_FORMAT.md), in price order.
GENERIC_USAGE_KEYS = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
# What the recording proxy witnesses for an attempt.
WIRE_COUNTERS = ("completed_turns", *SPEND_COUNTERS)
# Bridge diagnostics: meaningful only with the diagnostic events version marker.
DIAGNOSTIC_COUNTERS = ("discovery_failures", "incorrect_tool_calls")
# Every count an adapter record carries.
RECORD_COUNTERS = (*WIRE_COUNTERS, "tool_calls", "tool_errors", *DIAGNOSTIC_COUNTERS)
# What wire_adapter_disagreements may name: the wire's counters, and failed tool calls.
DISAGREEMENT_COUNTERS = (*WIRE_COUNTERS, "tool_errors")
# Values the report counts per variant when unknown ("what is missing").
MISSING_COUNTERS = ("wall_seconds", *WIRE_COUNTERS, "tool_errors", *DIAGNOSTIC_COUNTERS, "cost_usd", "verified_pass")

# How each counter reads in a sentence (the Markdown report, the view).
COUNTER_WORDS = {
    "verified_pass": "verified outcome",
    "wall_seconds": "wall seconds",
    "completed_turns": "completed parent turns",
    "uncached_input_tokens": "uncached input tokens",
    "cached_input_tokens": "cached input tokens",
    "cache_write_tokens": "cache-write tokens",
    "output_tokens": "output tokens",
    "tool_errors": "tool errors",
    "discovery_failures": "discovery failures (needs the diagnostic version marker)",
    "incorrect_tool_calls": "incorrect tool calls (needs the diagnostic version marker)",
    "cost_usd": "cost",
}

# --- agents -------------------------------------------------------------------------------

# The built-in agent profiles (campaign/agents/profiles/*.toml; a test holds them equal).
BUILTIN_AGENTS = ("claude-code", "codex", "gemini", "generic", "mini-swe-agent", "offline", "offline-wire", "opencode")
# Adapters map every client-specific failure onto one of these, so reports never
# carry client-authored error text. A set: it is only ever asked "is this one of them".
ERROR_CLASSES = frozenset(
    (
        "unparseable_output",  # stdout is garbled or truncated: nothing trustworthy in it
        "empty_output",  # the client printed nothing at all
        "agent_error",  # the client ran but reported failure (or exited non-zero)
        "max_turns",  # the client stopped at its own turn limit
        "permission_denied",  # the client refused tool calls for lack of approval
    )
)
# Whose figure an attempt's cost_usd is.
COST_BASES = ("client_reported", "wire_usage_x_catalog_price")
CLIENT_COST_BASIS, WIRE_COST_BASIS = COST_BASES
# The upstream of the replay provider (a scripted loopback model): what it answers is test data.
REPLAY = "replay"
# A providers catalog's price basis, as it writes it.
PRICE_BASIS_NAMES = ("public list price", "synthetic")

# --- teardown and disposal ----------------------------------------------------------------

TEARDOWN_OUTCOMES = ("clean", "forced", "recovered", "unverified")
CONTAINMENTS = ("cgroup2", "subreaper-pidfd", "pgid-only")
# Bounded reasons a teardown could not prove cleanup (safe for reports).
TEARDOWN_REASONS = (
    "survivors",
    "ledger_missing",
    "ledger_unreadable",
    "recovery_failed",
    "recovery_timeout",
    "cgroup_busy",
    "unprovable_member",
    "platform_unverifiable",
    # Every process proven gone, yet the container runtime still keeps the attempt's container.
    "container_kept",
)
DISPOSAL_REASONS = ("disposed", "finalization_failed", "cleanup_unverified", "root_missing", "root_replaced", "other_filesystem", "mount_point", "unremovable")

# --- outcomes -------------------------------------------------------------------------------

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
    "http_billing",  # 402, or a refusal for credit, quota or billing: the operator's account to fix
    "http_not_found",  # 404: the model or route does not exist at the provider (the operator's catalog)
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
    "http_billing": "HTTP 402/billing",
    "http_not_found": "HTTP 404",
    "unreachable": "upstream unreachable",
    "connection_reset": "connection reset",
    "stream_cut": "cut stream",
    "upstream_silent": "silent upstream",
}

# The verifier was ended by SIGTERM, SIGINT or SIGHUP that the engine did not send (an
# operator, a shutdown): no verdict either, an engine_error its trial runs again for
# (bounded like provider faults). SIGKILL and crash signals stay the agent's failure.
VERIFIER_KILLED = "verifier_killed"

FAILURE_CLASSES = (
    "profile_gate",
    "runtime_boot_failed",
    "profiler_unavailable",
    "timeout",
    *sorted(ERROR_CLASSES),
    "workspace_tampered",
    "verifier_timeout",
    "verifier_failed",
    # The verifier could not be started (its interpreter or tool is missing): the
    # machine's fault, not the agent's, so the attempt is an engine_error without a verdict.
    "verifier_error",
    VERIFIER_KILLED,
    "no_failed_tool_call",
    "profile_unconfirmed",
    "interrupted",
    "engine_error",
    # Workers: a worker stopped heartbeating mid-attempt (its provider halts), or this
    # runner's lease was halted or taken by another.
    "worker_lost",
    "lease_lost",
    "attempt_exceeded_ceiling",  # stopped while running: the wire saw it spend past its ceiling (outcome interrupted)
    *PROVIDER_FAULTS,
)

# Why `campaign tasks check` finds a task unsound (each task's one reason).
TASK_CHECK_REASONS = (
    "fixture_passes",  # the untouched fixture already passes: the task measures nothing
    "solution_fails",  # the reference solution does not pass: no agent could be credited
    "verifier_flaky",  # the same working copy got different verdicts run after run
    "verifier_error",  # the verifier could not start, or a command it runs was not found
    "verifier_timeout",  # the verifier did not finish within its deadline
    "needs_image",  # a Harbor environment/ that does more than copy files into /app, and no runtime can build it
    "image_build_failed",  # the task's environment/Dockerfile did not build (the step and the runtime's line)
    "image_missing",  # task.toml names a prebuilt docker_image that is not on this machine (nothing is pulled)
    "needs_privilege",  # Harbor's paths need a private mount namespace (CAP_SYS_ADMIN)
    "engine_error",  # the check itself could not run the task to the end
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

# Why a scheduled trial has no attempt: the stop reasons, plus the report's own.
NOT_ATTEMPTED_REASONS = STOP_REASONS + ("not_reached", "admitted_without_attempt", "campaign_stopped", "provider_error")
# Why an attempt counts towards spend but is no trial's result.
SPEND_ONLY_REASONS = ("interrupted", "left_running", "not_carried", "provider_error", "engine_error")
