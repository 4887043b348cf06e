"""Helpers shared by the report tests: write campaigns straight into a migrated store.

Rows go in with SQLAlchemy Core bulk inserts (one transaction per campaign),
which is what lets the property tests build hundreds of random stores quickly;
the rows are exactly what the repository would write.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Engine, insert, select

from campaign.canonical import spec_digest
from campaign.store import chain
from campaign.store.models import Attempt, Campaign, Trial

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
DIGEST = "ab" * 32


def insert_campaign(
    engine: Engine,
    trials: Sequence[Mapping[str, Any]],
    *,
    agent: str = "claude-code",
    live: bool = True,
    state: str = "completed",
    kind: str = "paired",
    seed: int = 107,
    stop_reason: str | None = None,
    experiment: Mapping[str, Any] | None = None,
    approved_plan_digest: str | None = DIGEST,
    provider: str = "openai-codex",
    model: str = "openai-codex:gpt-6.1-sol",
    continues: int | None = None,
    seal: bool = True,
) -> int:
    """One campaign; each trial is {task, repetition, variant, [status], [reason], [attempt: {...}],
    [earlier: [{...}, ...]], [carried_from: trial pk]}.

    ``attempt`` holds Attempt columns (verified_pass, wall_seconds, cost_usd, ...);
    a trial without one is not attempted (status ``not_attempted`` unless given).
    ``earlier`` are attempts the trial took before it (interrupted ones, by default),
    in seq order. ``carried_from`` links a continuation's trial (``continues``: the
    campaign it continues) to the earlier campaign's trial holding its result.
    Rows are sealed into the hash chain as the engine seals them (``seal=False``
    leaves them as a crashed writer would).
    """
    exp = dict(experiment) if experiment is not None else {"model": model, "seed": seed, "tasks": sorted({t["task"] for t in trials})}
    with engine.begin() as conn:
        campaign_id = conn.execute(
            insert(Campaign.__table__).values(
                kind=kind,
                state=state,
                live=live,
                stop_reason=stop_reason,
                agent=agent,
                seed=seed,
                experiment_json=json.dumps(exp, sort_keys=True),
                experiment_digest=spec_digest(exp),
                plan_digest=DIGEST,
                approved_plan_digest=approved_plan_digest,
                scheduled_count=len(trials),
                created_at=T0,
                continues_campaign_id=continues,
            )
        ).inserted_primary_key[0]
        order: dict[tuple[str, int], int] = {}
        trial_rows = []
        for position, t in enumerate(trials):
            prefix = f"{t['provider']}/" if "provider" in t else ""
            key = (prefix, t["task"], t["repetition"])
            pair_order = order.get(key, 0)
            order[key] = pair_order + 1
            pair = f"{prefix}{t['task']}/r{t['repetition']}"
            attempted = t.get("attempt") is not None or t.get("carried_from") is not None
            trial_rows.append(
                {
                    "campaign_id": campaign_id,
                    "pair_id": pair,
                    "trial_id": f"{pair}/{t['variant']}",
                    "provider": t.get("provider", provider),
                    "model": t.get("model", model),
                    "task": t["task"],
                    "variant": t["variant"],
                    "repetition": t["repetition"],
                    "pair_order": pair_order,
                    "position": position,
                    "status": t.get("status") or ("finished" if attempted else "not_attempted"),
                    "not_attempted_reason": t.get("reason", None if attempted else "spend_limit"),
                    "updated_at": T0,
                    "carried_from_trial_pk": t.get("carried_from"),
                }
            )
        conn.execute(insert(Trial.__table__), trial_rows)
        pks = dict(conn.execute(Trial.__table__.select().with_only_columns(Trial.__table__.c.position, Trial.__table__.c.id).where(Trial.__table__.c.campaign_id == campaign_id)).all())
        attempt_rows = []
        for position, t in enumerate(trials):
            for earlier in t.get("earlier", ()):
                row = {"campaign_id": campaign_id, "trial_pk": pks[position], "seq": len(attempt_rows) + 1, "status": "interrupted", "started_at": T0, "ended_at": T0}
                row.update({"outcome": "interrupted", "failure_class": "interrupted", "verified_pass": None, **earlier})
                attempt_rows.append(row)
            if t.get("attempt") is None:
                continue
            row = {"campaign_id": campaign_id, "trial_pk": pks[position], "seq": len(attempt_rows) + 1, "status": "finished", "started_at": T0, "ended_at": T0}
            row.update(t["attempt"])
            attempt_rows.append(row)
        if attempt_rows:
            # Every row gets every column so executemany sees one shape.
            columns = set().union(*attempt_rows)
            conn.execute(insert(Attempt.__table__), [{c: r.get(c) for c in columns} for r in attempt_rows])
    if seal and attempt_rows:
        chain.seal_pending(engine, int(campaign_id))
    return int(campaign_id)


def trial_pks(engine: Engine, campaign_id: int) -> dict[str, int]:
    """trial_id -> trials.id of one campaign (to carry results into a continuation)."""
    with engine.connect() as conn:
        return dict(conn.execute(select(Trial.__table__.c.trial_id, Trial.__table__.c.id).where(Trial.__table__.c.campaign_id == campaign_id)).all())


def full_attempt(**overrides: Any) -> dict[str, Any]:
    """An attempt with every counter observed (override to make things missing)."""
    base = {
        "outcome": "passed",
        "failure_class": None,
        "verified_pass": True,
        "verifier_exit_code": 0,
        "wall_seconds": 100.0,
        "completed_turns": 3,
        "uncached_input_tokens": 1000,
        "cached_input_tokens": 500,
        "cache_write_tokens": 10,
        "output_tokens": 200,
        "tool_calls": 5,
        "tool_errors": 0,
        "diagnostic_events_version": 1,
        "discovery_failures": 0,
        "incorrect_tool_calls": 0,
        "cost_usd": 0.25,
        "cost_reported": True,
        "spend_complete": True,
        "flush_complete": True,
        "cleanup_complete": True,
        "disposal_complete": True,
        "finalization_failed": False,
        "teardown_outcome": "clean",
        "config_digest": DIGEST,
        "fixture_digest": DIGEST,
        "agent_model": "gpt-6.1-sol",
        "applied_profiles": None,
    }
    base.update(overrides)
    return base


def paired_trials(tasks: Sequence[str], repetitions: int, attempt_for) -> list[dict[str, Any]]:
    """Both variants of every task x repetition; ``attempt_for(task, rep, variant)`` gives the attempt or None."""
    out = []
    for rep in range(1, repetitions + 1):
        for task in tasks:
            for variant in ("baseline", "coding"):
                out.append({"task": task, "repetition": rep, "variant": variant, "attempt": attempt_for(task, rep, variant)})
    return out


def test_helpers_write_a_campaign_the_repository_can_read(engine):
    from campaign.store import repository

    cid = insert_campaign(engine, paired_trials(["a", "b"], 2, lambda t, r, v: full_attempt()))
    assert len(repository.trials_in_order(engine, cid)) == 8
    assert len(repository.attempts_for(engine, cid)) == 8
