"""The report's spend: per variant, per provider and over the whole scope.

Exact sums (``Decimal``) over the database's spend rows, turned into JSON
numbers only at the end. Measured spend counts every attempt paid for;
equivalent spend keeps each provider's price basis and two bases are never
added. A figure that cannot be known is null with the reason why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from campaign.report import aggregates
from campaign.store.limits import SpendLimits
from campaign.vocabulary import VARIANTS


_BASIS_IDS = {"public list price": "public_list_price", "public_list_price": "public_list_price", "synthetic": "synthetic"}

_EQUIVALENT_LABEL = {"public_list_price": "list-price equivalent, not billed", "synthetic": "synthetic-price equivalent, not billed"}

def provider_bases(agent: str, exp: dict[str, Any], providers: Sequence[str]) -> dict[str, str | None]:
    """Each provider's price basis: the catalog's, recorded in the experiment; the offline
    agent's simulated route is synthetic; otherwise unknown (None), never guessed."""
    entries = exp.get("providers")
    by_name = {e.get("name"): e for e in entries if isinstance(e, dict)} if isinstance(entries, list) else {}
    out: dict[str, str | None] = {}
    for name in providers:
        entry = by_name.get(name)
        basis = _BASIS_IDS.get(entry.get("basis")) if isinstance(entry, dict) and isinstance(entry.get("basis"), str) else None
        if basis is None and (name == "offline" or (isinstance(entry, dict) and entry.get("agent") == "offline") or (entry is None and agent == "offline")):
            basis = "synthetic"
        out[name] = basis
    return out

@dataclass
class _Sums:
    """Exact spend sums over a set of SpendRows (a variant, a provider, the whole scope)."""

    attempts: int = 0
    results: int = 0
    interrupted: int = 0
    running: int = 0
    not_carried: int = 0
    provider_errors: int = 0
    engine_errors: int = 0
    cost: Decimal | None = None
    with_cost: int = 0
    complete: int = 0
    with_equivalent: int = 0
    # basis (None: unknown) -> exact equivalent sum of the providers on that basis
    equivalent: dict[str | None, Decimal] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: Iterable[aggregates.SpendRow], bases: dict[str, str | None]) -> _Sums:
        out = cls()
        for r in rows:
            out.attempts += r.attempts
            out.results += r.results
            out.interrupted += r.interrupted
            out.running += r.running
            out.not_carried += r.not_carried
            out.provider_errors += r.provider_errors
            out.engine_errors += r.engine_errors
            out.with_cost += r.with_cost
            out.complete += r.complete_spend
            out.with_equivalent += r.with_equivalent
            if r.cost_sum is not None:
                out.cost = r.cost_sum if out.cost is None else out.cost + r.cost_sum
            if r.equivalent_sum is not None:
                basis = bases.get(r.provider)
                out.equivalent[basis] = out.equivalent.get(basis, Decimal(0)) + r.equivalent_sum
        return out

    @property
    def spend_complete(self) -> bool | None:
        return self.complete == self.attempts if self.attempts else None

    def measured(self) -> tuple[float | None, str]:
        if not self.attempts:
            return None, "no_attempts"
        return (_usd(self.cost) if self.with_cost else None), _spend_status(self.with_cost, self.complete == self.attempts)

    def equivalent_total(self) -> tuple[Decimal | None, str | None, str | None]:
        """(exact sum, basis, status): one basis is summed; two bases are never added."""
        if not self.attempts:
            return None, None, "no_attempts"
        if len(self.equivalent) > 1:
            return None, None, "mixed_price_bases"
        if not self.equivalent:
            return None, None, "none_measured"
        ((basis, total),) = self.equivalent.items()
        return total, basis, _spend_status(self.with_equivalent, self.with_equivalent == self.attempts)

def _usd(value: Decimal | None) -> float | None:
    """An exact dollar sum as a JSON number (nano-dollar precision, so 0.1 + 0.2 is 0.3)."""
    return None if value is None else float(value)

def variants_section(
    results: Sequence[aggregates.VariantRow], spend: Sequence[aggregates.SpendRow], bases: dict[str, str | None], order: Sequence[str] = VARIANTS
) -> list[dict[str, Any]]:
    """One row per variant of ``order`` (the experiment's), then any other the rows name."""
    by_name = {row.variant: row for row in results}
    names = list(order) + sorted((set(by_name) | {r.variant for r in spend}) - set(order))
    return [_variant(name, by_name.get(name), _Sums.of((r for r in spend if r.variant == name), bases)) for name in names]

def _variant(name: str, row: aggregates.VariantRow | None, sums: _Sums) -> dict[str, Any]:
    """Outcomes from the variant's result attempts; spend from every attempt it paid for."""
    n = row.attempts if row is not None else 0
    successes = row.successes if row is not None else 0
    measured, measured_status = sums.measured()
    cost, cost_reason = _per_success(sums.cost, successes, sums.spend_complete is True)
    eq_total, eq_basis, eq_status = sums.equivalent_total()
    if eq_status == "mixed_price_bases":
        eq_cost, eq_reason = None, "mixed_price_bases" if successes else "undefined_zero_successes"
    else:
        eq_cost, eq_reason = _per_success(eq_total, successes, bool(sums.attempts) and sums.with_equivalent == sums.attempts)
    return {
        "variant": name,
        "attempts": n,
        "interrupted_attempts": sums.interrupted,
        "provider_error_attempts": sums.provider_errors,
        "engine_error_attempts": sums.engine_errors,
        "unfinished_attempts": sums.running,
        "not_carried_attempts": sums.not_carried,
        "spend_attempts": sums.attempts,
        "successes": successes,
        "success_rate": successes / n if n else None,
        "success_rate_reason": None if n else "no_attempts",
        "measured_spend_usd": measured,
        "measured_spend_status": measured_status,
        "attempts_with_cost": sums.with_cost,
        "attempts_with_complete_spend": sums.complete,
        "spend_complete": sums.spend_complete,
        "cost_per_verified_success_usd": cost,
        "cost_per_verified_success_reason": cost_reason,
        "equivalent_spend_usd": _usd(eq_total),
        "equivalent_spend_status": eq_status,
        "equivalent_spend_basis": eq_basis,
        "equivalent_spend_label": _EQUIVALENT_LABEL.get(eq_basis) if eq_total is not None else None,
        "equivalent_cost_per_verified_success_usd": eq_cost,
        "equivalent_cost_per_verified_success_reason": eq_reason,
        "wall_seconds_mean": row.wall_mean if row is not None else None,
        "wall_seconds_measured": row.with_wall if row is not None else 0,
        "tool_error_recoveries": row.recoveries if row is not None and row.recoveries_known else None,
        "tool_error_recoveries_known": row.recoveries_known if row is not None else 0,
        "missing": {k: v for k, v in row.missing.items() if v} if row is not None else {},
    }

def provider_section(name: str, basis: str | None, rows: Sequence[aggregates.SpendRow]) -> dict[str, Any]:
    sums = _Sums.of(rows, {name: basis})
    measured, measured_status = sums.measured()
    eq_total, _, eq_status = sums.equivalent_total()
    return {
        "name": name,
        "basis": basis,
        "basis_reason": None if basis else "not_recorded_in_store",
        "attempts": sums.results,
        "interrupted_attempts": sums.interrupted,
        "provider_error_attempts": sums.provider_errors,
        "engine_error_attempts": sums.engine_errors,
        "spend_attempts": sums.attempts,
        "measured_spend_usd": measured,
        "measured_spend_status": measured_status,
        "equivalent_spend_usd": _usd(eq_total),
        "equivalent_spend_status": eq_status,
    }

def spend_section(scope: aggregates.Scope, rows: Sequence[aggregates.SpendRow], bases: dict[str, str | None], limits: SpendLimits | None) -> dict[str, Any]:
    """The whole scope's spend: measured cost summed; equivalent spend per basis, and one
    total only when every figure shares one basis; and the caps the run was held to (its
    latest run's, as recorded: null when it ran under none, or none this engine can read)."""
    sums = _Sums.of(rows, bases)
    measured, measured_status = sums.measured()
    eq_total, eq_basis, eq_status = sums.equivalent_total()
    if eq_status == "mixed_price_bases":
        reason = "mixed_price_bases"
    elif eq_total is None:
        reason = "no_attempts" if eq_status == "no_attempts" else "no_equivalent_spend"
    else:
        reason = None
    return {
        "campaigns": list(scope.campaigns),
        "spend_attempts": sums.attempts,
        "measured_spend_usd": measured,
        "measured_spend_status": measured_status,
        "attempts_with_cost": sums.with_cost,
        "attempts_with_complete_spend": sums.complete,
        "equivalent_spend_by_basis": {basis: _usd(total) for basis, total in sorted(sums.equivalent.items(), key=lambda kv: str(kv[0])) if basis is not None},
        "equivalent_spend_usd": _usd(eq_total),
        "equivalent_spend_basis": eq_basis,
        "equivalent_spend_reason": reason,
        "limits": None if limits is None else {f: _usd(getattr(limits, f)) for f in ("max_spend_usd", "provider_max_spend_usd", "per_attempt_ceiling_usd")},
    }

def _spend_status(measured: int, complete: bool) -> str:
    if measured == 0:
        return "none_measured"
    return "complete" if complete else "partial"

def _per_success(total: Decimal | None, successes: int, complete: bool) -> tuple[float | None, str | None]:
    """All-attempt spend / verified successes, or null with the reason (zero successes wins)."""
    if successes == 0:
        return None, "undefined_zero_successes"
    if not complete or total is None:
        return None, "incomplete_missing_spend"
    return float(total / successes), None
