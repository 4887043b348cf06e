"""Explicit bounded live authorization: every check runs before any trial starts.

The operator approves one exact plan object; the runner proves the digest,
the limits, the credential names and the experiment binding, and reports every
problem at once (one line each) so a refused launch can be fixed in one pass.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from campaign.errors import UsageProblem
from campaign.experiment import differences
from campaign.canonical import spec_digest
from campaign.plan import is_template
from campaign.store.limits import SpendLimits, amount_problem

PLAN_KEYS = frozenset(
    {"approved", "experiment", "max_attempts", "max_spend_usd", "per_attempt_spend_ceiling_usd", "provider_budget_enforced", "credential_env"}
)
CREDENTIAL_NAME = re.compile(r"^[A-Z][A-Z0-9_]*(API_KEY|ACCESS_TOKEN|AUTH_TOKEN)$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Approval:
    """What an approved plan authorizes, once every check has passed."""

    plan_digest: str
    limits: SpendLimits
    max_attempts: int
    credential_env: tuple[str, ...]


def _positive_finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def plan_problems(plan: Mapping[str, Any], digest: str, scheduled: int, environ: Mapping[str, str]) -> list[str]:
    """Every reason ``plan`` does not authorize a live run, as one line each."""
    if is_template(plan):
        return ["--plan: this is the plan-template wrapper; run `campaign plan extract TEMPLATE OUT`, approve OUT, and pass that"]
    problems: list[str] = []
    unknown = sorted(set(plan) - PLAN_KEYS)
    missing = sorted(PLAN_KEYS - set(plan))
    if unknown:
        problems.append(f"--plan: unknown field(s) {', '.join(unknown)}; the approved plan has exactly {', '.join(sorted(PLAN_KEYS))}")
    if missing:
        problems.append(f"--plan: missing field(s) {', '.join(missing)}")
    if not SHA256.match(digest):
        problems.append("--approve-plan-digest: must be 64 lowercase hexadecimal characters")
    elif spec_digest(plan) != digest:
        problems.append("--approve-plan-digest: does not equal the canonical digest of --plan; any edit needs renewed review and a new digest (campaign plan digest PLAN)")
    if plan.get("approved") is not True:
        problems.append("--plan: approved must be true (set it only after review)")
    top, ceiling = plan.get("max_spend_usd"), plan.get("per_attempt_spend_ceiling_usd")
    if not _positive_finite(top):
        problems.append("--plan: max_spend_usd must be a positive finite number")
    if not _positive_finite(ceiling):
        problems.append("--plan: per_attempt_spend_ceiling_usd must be a positive finite number")
    for name, amount in (("max_spend_usd", top), ("per_attempt_spend_ceiling_usd", ceiling)):
        if _positive_finite(amount) and (problem := amount_problem(amount)) is not None:
            problems.append(f"--plan: {name} {problem}")
    if _positive_finite(top) and _positive_finite(ceiling) and ceiling > top:
        problems.append("--plan: per_attempt_spend_ceiling_usd must not exceed max_spend_usd")
    max_attempts = plan.get("max_attempts")
    if not isinstance(max_attempts, int) or isinstance(max_attempts, bool) or max_attempts < scheduled:
        problems.append(f"--plan: max_attempts must be a whole number of at least the scheduled count ({scheduled})")
    if plan.get("provider_budget_enforced") is not True:
        problems.append("--plan: provider_budget_enforced must be true, and only after an external hard provider spend cap exists")
    problems += _credential_problems(plan.get("credential_env"), environ)
    return problems


def _credential_problems(names: Any, environ: Mapping[str, str]) -> list[str]:
    if not isinstance(names, list) or not names:
        return ["--plan: credential_env must be a non-empty list of credential variable names (names, never values)"]
    problems = []
    if not all(isinstance(n, str) for n in names):
        return ["--plan: credential_env must hold variable names as strings"]
    if len(set(names)) != len(names):
        problems.append("--plan: credential_env names must be distinct")
    for index, name in enumerate(names, 1):
        if not CREDENTIAL_NAME.match(name):
            # Not echoed: what was written in place of a name may be the credential itself.
            problems.append(f"--plan: credential_env entry {index} is not a credential variable name: it must be upper case and end in API_KEY, ACCESS_TOKEN or AUTH_TOKEN")
        elif not environ.get(name):
            problems.append(f"--plan: credential variable {name} is not set in the environment; export it before launching")
    return problems


def authorize(plan: Mapping[str, Any], digest: str, scheduled: int, environ: Mapping[str, str], current_experiment: Mapping[str, Any]) -> Approval:
    """Raise one UsageProblem listing every problem, or return what is authorized."""
    problems = plan_problems(plan, digest, scheduled, environ)
    if not problems:
        differing = differences(plan.get("experiment"), current_experiment)
        if differing:
            problems.append(
                f"--plan: the experiment differs from the approved plan in: {', '.join(differing)}; "
                "generate a new plan (campaign coding --paired without --live) and have it approved"
            )
    if problems:
        raise UsageProblem("\n".join(problems))
    return Approval(
        plan_digest=digest,
        limits=SpendLimits(plan["max_spend_usd"], plan["per_attempt_spend_ceiling_usd"]),
        max_attempts=plan["max_attempts"],
        credential_env=tuple(plan["credential_env"]),
    )
