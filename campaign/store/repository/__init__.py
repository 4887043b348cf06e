"""Every query the engine makes. State changes are compare-and-set updates.

Functions take an Engine and open their own short transaction, so each state
change is durable the moment the function returns (ledger rows above all: a
process may exec only after its row is committed). Each goes through
``store.scope``, so a store failing in use is the engine's ``StoreError``.

The modules, by what they keep: ``campaigns`` (campaign rows, lineage, the
runner lease), ``trials`` (the schedule and each trial's status), ``attempts``
(attempt rows and their sealing), ``ledger`` (owned processes), ``continuation``
(carrying a blocked campaign's results over) and ``spend`` (the exact sums the
spend gates read). Every name is importable from here::

    from campaign.store import repository
    campaign_id = repository.create_campaign(engine, new, schedule, model=..., default_provider=...)
"""

from campaign.store.repository.attempts import (
    attempts_for,
    fault_attempts,
    finish_attempt,
    get_attempt,
    start_attempt,
    unresolved_attempts,
    update_attempt,
)
from campaign.store.repository.campaigns import (
    CampaignCounts,
    NewCampaign,
    RunnerIdentity,
    acquire_campaign,
    campaign_counts,
    campaign_runner,
    close_campaign,
    create_campaign,
    get_campaign,
    input_heads,
    latest_campaign,
    lineage,
    release_campaign,
    report_inputs,
    set_campaign_state,
)
from campaign.store.repository.common import REQUEUED, Clock, utcnow
from campaign.store.repository.continuation import carried_results, carryable_trials, create_continuation
from campaign.store.repository.ledger import LedgerMember, ledger_for, record_ledger, set_ledger_verdict
from campaign.store.repository.spend import (
    ApprovalUse,
    ProviderSpend,
    approval_use,
    counted_spend,
    counted_usd,
    largest_attempt_spend,
    measured_spend,
    measured_spend_parts,
    provider_spend,
    record_spend_limits,
    spend_limits,
)
from campaign.store.repository.trials import (
    admit_trial,
    mark_not_attempted,
    mark_remaining_not_attempted,
    reopen_trials,
    reset_admitted_without_attempt,
    trials_in_order,
)

__all__ = [
    "REQUEUED", "ApprovalUse", "CampaignCounts", "Clock", "LedgerMember", "NewCampaign", "ProviderSpend", "RunnerIdentity",
    "acquire_campaign", "admit_trial", "approval_use", "attempts_for", "campaign_counts", "campaign_runner", "carried_results", "carryable_trials",
    "close_campaign", "counted_spend", "counted_usd", "create_campaign", "create_continuation", "fault_attempts", "finish_attempt",
    "get_attempt", "get_campaign", "input_heads", "largest_attempt_spend", "latest_campaign", "ledger_for", "lineage", "mark_not_attempted", "mark_remaining_not_attempted",
    "measured_spend", "measured_spend_parts", "provider_spend", "record_ledger", "record_spend_limits", "release_campaign", "report_inputs",
    "reopen_trials", "reset_admitted_without_attempt", "set_campaign_state", "set_ledger_verdict", "spend_limits", "start_attempt",
    "trials_in_order", "unresolved_attempts", "update_attempt", "utcnow",
]  # fmt: skip
