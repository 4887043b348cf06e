"""One spend-limit type: its exact decimals, its stored form and how a store reads it back."""

from __future__ import annotations

from decimal import Decimal

import pytest

from campaign.schedule import build_schedule
from campaign.store import repository
from campaign.store.limits import SpendLimits
from campaign.store.migrate import open_store

PAIRED = SpendLimits(0.3, 0.1)
CAMPAIGN = SpendLimits(None, Decimal("0.01"), provider_max_spend_usd=Decimal("1"))
BOTH = SpendLimits(Decimal("2.50"), Decimal("0.25"), provider_max_spend_usd=Decimal("1"))


def test_the_stored_form_is_the_text_earlier_engines_wrote():
    # Pinned: stores written before the three limit types became one hold exactly these.
    assert PAIRED.stored() == '{"max_spend_usd": "0.3", "per_attempt_ceiling_usd": "0.1"}'
    assert SpendLimits(5, 1).stored() == '{"max_spend_usd": "5", "per_attempt_ceiling_usd": "1"}'
    assert CAMPAIGN.stored() == '{"per_attempt_ceiling_usd": "0.01", "provider_max_spend_usd": "1"}'
    assert BOTH.stored() == '{"max_spend_usd": "2.50", "per_attempt_ceiling_usd": "0.25", "provider_max_spend_usd": "1"}'


def test_amounts_are_exact_decimals_as_written():
    assert PAIRED.max_spend_usd == Decimal("0.3") and PAIRED.per_attempt_ceiling_usd == Decimal("0.1")
    assert CAMPAIGN.max_spend_usd is None and CAMPAIGN.provider_max_spend_usd == Decimal("1")


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ((None, 1), "needs a cap"),
        ((1, 2), "must not exceed max_spend_usd"),
        ((None, 2, 1), "must not exceed provider_max_spend_usd"),
        ((1, 0), "positive"),
        ((float("inf"), 1), "finite"),
        ((True, 1), "must be a number"),
        ((1, "0.5"), "must be a number"),
        ((Decimal("1E+12"), 1), "under 10\\^12"),
        ((1, Decimal("1E-13")), "at most 12 decimal places"),
    ],
)
def test_limits_that_hold_nothing_are_refused(args, why):
    with pytest.raises(ValueError, match=why):
        SpendLimits(*args)


def test_an_amount_written_with_an_exponent_is_stored_as_plain_digits_and_reads_back():
    limits = SpendLimits(Decimal("1E+2"), Decimal("5E-12"))
    assert limits.stored() == '{"max_spend_usd": "100", "per_attempt_ceiling_usd": "0.000000000005"}'
    assert SpendLimits.from_stored(limits.stored()) == limits
    largest = SpendLimits(Decimal("999999999999.999999999999"), Decimal("0.000000000001"))
    assert SpendLimits.from_stored(largest.stored()) == largest


def test_the_store_reads_back_what_it_recorded(backend_url):
    store = open_store(backend_url)
    try:
        new = repository.NewCampaign(kind="campaign", state="running", live=True, agent="offline", seed=1, experiment={})
        campaign_id = repository.create_campaign(store, new, build_schedule(["task-a"], 1, seed=1), model="offline:sim", default_provider="offline")
        assert repository.spend_limits(store, campaign_id) is None
        for limits in (PAIRED, CAMPAIGN, BOTH):
            repository.record_spend_limits(store, campaign_id, limits)
            assert repository.spend_limits(store, campaign_id) == limits
        assert repository.spend_limits(store, campaign_id + 1) is None
    finally:
        store.dispose()


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "not json",
        "[]",
        '{"per_attempt_ceiling_usd": "1"}',
        '{"max_spend_usd": "1", "per_attempt_ceiling_usd": "2"}',
        '{"max_spend_usd": "1e999", "per_attempt_ceiling_usd": "1"}',
        '{"max_spend_usd": "5", "per_attempt_ceiling_usd": "1", "spent": "0"}',
        '{"max_spend_usd": true, "per_attempt_ceiling_usd": 1}',
        '{"max_spend_usd": "-5", "per_attempt_ceiling_usd": "1"}',
    ],
)
def test_what_this_engine_would_not_have_written_is_no_limit(text):
    assert SpendLimits.from_stored(text) is None


def test_numbers_in_place_of_decimal_text_still_read():
    assert SpendLimits.from_stored('{"max_spend_usd": 5, "per_attempt_ceiling_usd": 0.5}') == SpendLimits(5, 0.5)
