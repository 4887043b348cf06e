"""Provider leases and admission under spend reservations, raced on both backends."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from sqlalchemy import update

from campaign.schedule import build_schedule
from campaign.store import leases, repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.limits import SpendLimits
from campaign.store.migrate import open_store
from campaign.store.models import ProviderLease, SpendReservation

A = leases.WorkerIdentity("host-a", 101, 1001, "boot")
B = leases.WorkerIdentity("host-b", 202, 2002, "boot")
C = leases.WorkerIdentity("host-c", 303, 3003, "boot")


@pytest.fixture
def store(backend_url):
    engine = open_store(backend_url)
    yield engine
    engine.dispose()


def campaign(engine, providers=("alpha", "beta"), tasks=2) -> int:
    schedule = build_schedule([f"task-{i}" for i in range(tasks)], 2, seed=1, providers=list(providers))
    campaign_id = repository.create_campaign(
        engine,
        repository.NewCampaign(kind="campaign", state="running", live=True, agent="offline", seed=1, experiment={}),
        schedule,
        model="offline:sim",
        default_provider=providers[0],
    )
    leases.ensure_leases(engine, campaign_id, providers)
    return campaign_id


def test_one_worker_per_provider_and_none_for_a_provider_without_work(store):
    cid = campaign(store)
    got = {leases.claim_provider(store, cid, A), leases.claim_provider(store, cid, B)}
    assert got == {"alpha", "beta"}
    assert leases.claim_provider(store, cid, C) is None
    leases.release(store, cid, A)
    assert leases.claim_provider(store, cid, C) in {"alpha", "beta"}
    for trial in repository.trials_in_order(store, cid):
        repository.mark_not_attempted(store, trial.id, "spend_limit")
    leases.release(store, cid, B)
    assert leases.claim_provider(store, cid, A) is None  # nothing scheduled is left


def test_claims_race_and_each_provider_goes_to_exactly_one_worker(store):
    cid = campaign(store, providers=tuple(f"p{i}" for i in range(6)), tasks=1)
    won: list[tuple[int, str]] = []
    barrier = threading.Barrier(12)

    def worker(n: int) -> None:
        engine = make_engine(resolve_url(str(store.url.render_as_string(hide_password=False))))
        me = leases.WorkerIdentity("h", 1000 + n, n, "boot")
        barrier.wait()
        while (p := leases.claim_provider(engine, cid, me)) is not None:
            won.append((n, p))
        engine.dispose()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(p for _, p in won) == [f"p{i}" for i in range(6)]


def test_a_stale_lease_with_a_running_attempt_halts_its_provider_and_names_the_host(store):
    cid = campaign(store)
    provider = leases.claim_provider(store, cid, A)
    trial = next(t for t in repository.trials_in_order(store, cid) if t.provider == provider)
    assert leases.admit(store, trial, me=A, caps=None, lineage=[cid]) is None
    attempt_id = repository.start_attempt(store, trial)
    assert leases.heartbeat(store, cid, A)
    assert leases.stale(store, cid, after_seconds=30) == []
    # The worker stops heartbeating: its stamp falls behind the database's clock.
    past = leases.now_epoch(store) - 60
    with store.begin() as conn:
        conn.execute(update(ProviderLease).where(ProviderLease.provider == provider).values(heartbeat_epoch=past))
    (lost,) = leases.stale(store, cid, after_seconds=30)
    assert lost.holder == A
    assert leases.halt_lost(store, cid, lost) == attempt_id
    row = repository.get_attempt(store, attempt_id)
    assert (row.status, row.cleanup_complete, row.teardown_outcome) == ("running", False, "unverified")
    (halt,) = leases.halted(store, cid)
    assert (halt.provider, halt.halted_attempt_id, halt.holder.host) == (provider, attempt_id, "host-a")
    # Halted: no worker may take it, and the lost worker can no longer heartbeat or admit.
    leases.release(store, cid, B)
    assert leases.claim_provider(store, cid, B, providers=[provider]) is None
    assert not leases.heartbeat(store, cid, A, provider)
    nxt = [t for t in repository.trials_in_order(store, cid) if t.provider == provider and t.status == "scheduled"][0]
    assert leases.admit(store, nxt, me=A, caps=None, lineage=[cid]) == "lease_lost"


def test_a_stale_lease_between_attempts_is_freed_and_its_admission_requeued(store):
    cid = campaign(store)
    provider = leases.claim_provider(store, cid, A)
    trial = next(t for t in repository.trials_in_order(store, cid) if t.provider == provider)
    caps = SpendLimits(None, Decimal("0.1"), provider_max_spend_usd=Decimal("1"))
    assert leases.admit(store, trial, me=A, caps=caps, lineage=[cid]) is None
    with store.begin() as conn:
        conn.execute(update(ProviderLease).where(ProviderLease.provider == provider).values(heartbeat_epoch=None))
    (lost,) = leases.stale(store, cid, after_seconds=30)
    assert leases.halt_lost(store, cid, lost) is None
    assert leases.halted(store, cid) == []
    assert repository.get_campaign(store, cid) and [t.status for t in repository.trials_in_order(store, cid) if t.id == trial.id] == ["scheduled"]
    with store.connect() as conn:
        assert conn.execute(SpendReservation.__table__.select()).all() == []
    assert leases.claim_provider(store, cid, B, providers=[provider]) == provider


def test_the_outlook_counts_what_is_left_what_a_worker_could_take_and_what_is_in_flight(store):
    cid = campaign(store)  # alpha and beta, 8 trials each
    assert leases.outlook(store, cid) == leases.Outlook("running", None, left=16, claimable=16, held=0)
    provider = leases.claim_provider(store, cid, A)
    other = ({"alpha", "beta"} - {provider}).pop()
    assert leases.outlook(store, cid) == leases.Outlook("running", None, left=16, claimable=8, held=1)
    assert leases.outlook(store, cid, providers=[provider]) == leases.Outlook("running", None, left=8, claimable=0, held=1)
    for trial in repository.trials_in_order(store, cid):
        if trial.provider == other:
            repository.mark_not_attempted(store, trial.id, "spend_limit")
    # Held with nothing else to take: not settled, the holder may give trials back.
    look = leases.outlook(store, cid)
    assert (look.left, look.claimable, look.held, look.settled) == (8, 0, 1, False)
    trial = next(t for t in repository.trials_in_order(store, cid) if t.provider == provider)
    assert leases.admit(store, trial, me=A, caps=None, lineage=[cid]) is None
    repository.start_attempt(store, trial)
    with store.begin() as conn:
        conn.execute(update(ProviderLease).where(ProviderLease.provider == provider).values(heartbeat_epoch=None))
    (lost,) = leases.stale(store, cid, after_seconds=30)
    leases.halt_lost(store, cid, lost)
    # Halted: its trials are left, but nobody could take them and nothing counts as in flight.
    look = leases.outlook(store, cid)
    assert (look.left, look.claimable, look.held, look.settled) == (7, 0, 0, True)
    repository.set_campaign_state(store, cid, expected=("running",), state="stopped", stop_reason="worker_lost")
    assert (leases.outlook(store, cid).state, leases.outlook(store, cid).stop_reason) == ("stopped", "worker_lost")


@pytest.mark.parametrize("scope", ["provider", "campaign"])
def test_racing_admissions_never_reserve_past_a_cap(store, scope):
    cid = campaign(store, providers=("alpha",), tasks=8)  # 32 trials of one provider
    trials = repository.trials_in_order(store, cid)
    ceiling, cap = Decimal("0.1"), Decimal("0.7")
    caps = SpendLimits(cap if scope == "campaign" else None, ceiling, provider_max_spend_usd=cap if scope == "provider" else None)
    results: list[str | None] = []
    barrier = threading.Barrier(8)

    def racer(chunk) -> None:
        engine = make_engine(resolve_url(str(store.url.render_as_string(hide_password=False))))
        barrier.wait()
        for trial in chunk:
            results.append(leases.admit(engine, trial, me=None, caps=caps, lineage=[cid]))
        engine.dispose()

    threads = [threading.Thread(target=racer, args=(trials[n::8],)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(None) == 7  # 7 x 0.1 fits 0.7 exactly; an 8th would not
    assert set(results) == {None, "spend_limit"}
    with store.connect() as conn:
        held = conn.execute(SpendReservation.__table__.select()).all()
    assert len(held) == 7 and sum(r.nano_usd for r in held) == 700_000_000


def test_finalization_releases_the_reservation_and_counts_the_real_cost(store):
    cid = campaign(store, providers=("alpha",), tasks=1)
    first, second = repository.trials_in_order(store, cid)[:2]
    caps = SpendLimits(Decimal("0.6"), Decimal("0.5"))
    assert leases.admit(store, first, me=None, caps=caps, lineage=[cid]) is None
    assert leases.admit(store, second, me=None, caps=caps, lineage=[cid]) == "spend_limit"  # 0.5 held + 0.5 > 0.6
    attempt_id = repository.start_attempt(store, first)
    repository.finish_attempt(store, attempt_id, first.id, outcome="passed", cost_usd=0.05, spend_complete=True, cleanup_complete=True)
    assert leases.admit(store, second, me=None, caps=caps, lineage=[cid]) is None  # 0.05 spent + 0.5 <= 0.6


def test_a_holder_proven_dead_is_lost_at_once_and_a_fresh_stale_one_only_by_the_clock(store):
    cid = campaign(store)
    assert leases.claim_provider(store, cid, A) == "alpha"
    assert leases.claim_provider(store, cid, B) == "beta"
    assert leases.heartbeat(store, cid, A) and leases.heartbeat(store, cid, B)
    # Both heartbeats are fresh; only A is proven dead (a predicate the caller owns).
    (lost,) = leases.lost(store, cid, 30, dead=lambda holder: holder == A)
    assert (lost.provider, lost.holder) == ("alpha", A)
    assert leases.halt_lost(store, cid, lost) is None  # no attempt in flight: freed
    assert leases.claim_provider(store, cid, C, providers=["alpha"]) == "alpha"
    assert leases.lost(store, cid, 30, dead=lambda holder: False) == []
    past = leases.now_epoch(store) - 60
    with store.begin() as conn:
        conn.execute(update(ProviderLease).where(ProviderLease.provider == "beta").values(heartbeat_epoch=past))
    assert [lease.provider for lease in leases.lost(store, cid, 30, dead=lambda holder: False)] == ["beta"]


def test_a_cap_over_every_provider_admits_nothing_once_any_providers_spend_is_unknown(store):
    """A sum counts an unknown spend as 0: alpha's unbounded attempt would let beta spend the
    whole cap again. A running attempt is bounded by its reservation; a provider's own cap
    does not read the other provider's spend."""
    cid = campaign(store)
    trials = repository.trials_in_order(store, cid)
    alpha = [t for t in trials if t.provider == "alpha"]
    beta = [t for t in trials if t.provider == "beta"]
    total = SpendLimits(Decimal("25"), Decimal("1"))
    assert leases.admit(store, alpha[0], me=None, caps=total, lineage=[cid]) is None
    running = repository.start_attempt(store, alpha[0])
    assert leases.admit(store, beta[0], me=None, caps=total, lineage=[cid]) is None  # alpha's attempt runs: reserved
    repository.finish_attempt(store, running, alpha[0].id, outcome="passed", cost_usd=None, spend_complete=False, cleanup_complete=True)
    assert leases.admit(store, beta[1], me=None, caps=total, lineage=[cid]) == "spend_incomplete"
    assert leases.admit(store, alpha[1], me=None, caps=total, lineage=[cid]) == "spend_incomplete"
    per_provider = SpendLimits(None, Decimal("1"), provider_max_spend_usd=Decimal("25"))
    assert leases.admit(store, beta[1], me=None, caps=per_provider, lineage=[cid]) is None
