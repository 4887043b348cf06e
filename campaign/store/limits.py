"""The operator's spend limits: one type for every lane, the store and the view.

A paired run takes its limits from the approved plan (``max_spend_usd`` over the
run, ``per_attempt_spend_ceiling_usd``); a campaign from ``--max-total-spend-usd``
(the campaign), ``--max-spend-usd`` (each provider) and ``--attempt-ceiling-usd``,
parsed once where the command line is read. Gates compare exact decimals; the
store keeps the limits as decimal text in ``campaigns.spend_limits_json`` under
the field names below, a cap that is not set being absent: the form every store
written so far holds, so old stores read back as they were written.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any

from campaign.store.money import to_decimal

# A stored amount as this engine writes it (an operator's number as plain decimal
# text): bounded, so nothing odd read back from a store reaches a page.
_STORED_DECIMAL = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,12})?")


def amount_problem(value: int | float | Decimal) -> str | None:
    """Why ``value`` is not a spend limit this engine stores exactly (None: it is one): a
    positive number under 10**12 dollars with at most 12 decimal places. A limit it
    could not read back would be shown as no limit at all."""
    exact = to_decimal(value)
    if not (exact.is_finite() and exact > 0):
        return "must be positive and finite"
    if not _STORED_DECIMAL.fullmatch(format(exact, "f")):
        return "must be under 10^12 US dollars with at most 12 decimal places"
    return None


@dataclass(frozen=True)
class SpendLimits:
    """Spend limits as exact decimals: gates compare decimal dollars, never binary
    floats (0.2 + 0.1 must equal a limit of 0.3).

    ``per_attempt_ceiling_usd`` is what one attempt may spend (reserved when it is
    admitted); ``max_spend_usd`` caps the whole run (a paired run, or a campaign
    over every provider) and ``provider_max_spend_usd`` each provider of a
    campaign. None: no such cap; at least one cap is set."""

    max_spend_usd: Decimal | None
    per_attempt_ceiling_usd: Decimal
    provider_max_spend_usd: Decimal | None = None

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if value is None and field.name != "per_attempt_ceiling_usd":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
                raise ValueError(f"{field.name} must be a number")
            problem = amount_problem(value)
            if problem is not None:
                raise ValueError(f"{field.name} {problem}")
            object.__setattr__(self, field.name, to_decimal(value))
        if self.max_spend_usd is None and self.provider_max_spend_usd is None:
            raise ValueError("a per-attempt ceiling needs a cap it must fit: max_spend_usd or provider_max_spend_usd")
        for name in ("max_spend_usd", "provider_max_spend_usd"):
            cap = getattr(self, name)
            if cap is not None and self.per_attempt_ceiling_usd > cap:
                raise ValueError(f"per_attempt_spend_ceiling_usd must not exceed {name}")

    def stored(self) -> str:
        """The JSON text the store keeps (sorted keys, amounts as exact decimal text)."""
        return json.dumps({f.name: format(getattr(self, f.name), "f") for f in fields(self) if getattr(self, f.name) is not None}, sort_keys=True)

    @classmethod
    def from_stored(cls, text: str | None) -> SpendLimits | None:
        """The limits a store recorded; None when it recorded none, or anything this
        engine would not have written (unknown stays unknown, never a made-up cap)."""
        try:
            recorded = json.loads(text) if text else None
        except ValueError:
            return None
        if not isinstance(recorded, dict) or set(recorded) - {f.name for f in fields(cls)}:
            return None
        amounts = {name: _amount(value) for name, value in recorded.items()}
        if None in amounts.values():
            return None
        try:
            return cls(amounts.get("max_spend_usd"), amounts.get("per_attempt_ceiling_usd"), amounts.get("provider_max_spend_usd"))
        except ValueError:
            return None


def _amount(value: Any) -> Decimal | None:
    """A stored amount: its exact decimal text (as written), or a plain finite number."""
    if isinstance(value, str):
        return Decimal(value) if _STORED_DECIMAL.fullmatch(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return to_decimal(value)
