"""The report's SQL: per-variant aggregates, per-task paired means, completion counts, spend.

With ``store/`` this is the one place SQL lives. Everything here is SQLAlchemy
Core (GROUP BY and conditional sums, no dialect-specific functions), so it
runs the same on SQLite and PostgreSQL and the database, not Python, does the
counting over large stores. Unknown stays NULL: ``sum`` and ``avg`` skip NULLs,
and every count of "known" values is a ``count(column)``. Dollar sums are
exact (``store.money``: integer nano-dollars in SQL, ``Decimal`` here).

Which attempt is a trial's result. A trial may own several attempt rows: an
attempt interrupted on request (or orphaned ``running`` by a killed runner)
keeps its row and its spend but carries no verdict, and the trial gets a fresh
attempt on resume. At most one attempt per trial is ``finished``: that one is
the trial's result. A campaign that continues a blocked one has trials that
carry an earlier campaign's verified result (``trials.carried_from_trial_pk``);
their attempts are read through that link, never copied. ``selections.OWNER`` is
the one expression that says whose attempts a trial reads.

Two sets of attempts, then:

- results: the finished attempt of each trial in scope (through ``OWNER``):
  outcomes, wall time, counters and the paired differences use these only (the
  per-trial rows pair ``scope_trials`` with the attempt rows the chain check read,
  by the same rule, in ``report.results``);
- spend: every attempt row of this campaign and of the campaigns it continues
  (``Scope.lineage``), whatever its status: interrupted attempts and an earlier
  campaign's attempts that were not carried over were paid for too.

Every query is built from the same selections (``selections``: the scope's
where-clauses, whose attempts a trial reads, the result and spend joins); what
the outcomes are counted from is in ``outcomes``, what was paid for in ``spend``.
"""

from __future__ import annotations

from campaign.report.aggregates.outcomes import (
    SCOPE_TRIAL_NAMES,
    TaskRow,
    VariantRow,
    distinct_values,
    scope_trials,
    task_rows,
    trials_by_status,
    unattempted_trials,
    variant_rows,
)
from campaign.report.aggregates.selections import Scope
from campaign.report.aggregates.spend import (
    AttemptCost,
    FaultRow,
    SpendRow,
    attempt_costs,
    fault_rows,
    has_attempts,
    spend_only_attempts,
    spend_rows,
)

__all__ = [
    "SCOPE_TRIAL_NAMES",
    "AttemptCost",
    "FaultRow",
    "Scope",
    "SpendRow",
    "TaskRow",
    "VariantRow",
    "attempt_costs",
    "distinct_values",
    "fault_rows",
    "has_attempts",
    "scope_trials",
    "spend_only_attempts",
    "spend_rows",
    "task_rows",
    "trials_by_status",
    "unattempted_trials",
    "variant_rows",
]
