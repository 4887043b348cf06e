"""`campaign worker`: run a campaign's providers, one lease at a time, beside other workers."""

from __future__ import annotations

import os
import sys

import click

from campaign.cli.common import EXIT_UNFINISHED, ROW_ID, core_errors, db_option
from campaign.cli.paths import AgentProfileRef, InputDir, InputFile, OutputDir
from campaign.errors import UsageProblem
from campaign.lanes import options as opt
from campaign.lanes import parallel
from campaign.lanes.continuation import my_identity
from campaign.lanes.worker import run_worker
from campaign.store import leases, repository
from campaign.store.migrate import open_store


@click.command(context_settings={"max_content_width": 100})
@click.option("--campaign-id", type=ROW_ID, metavar="ID", help="The campaign to work on [default: the store's latest campaign].")
@click.option("--providers", metavar="NAME,NAME", help="Only these providers of the campaign [default: any].")
@click.option("--agent", type=AgentProfileRef(), metavar="NAME|FILE.toml", help="The campaign's agent profile, when it was not the catalog's default.")
@click.option("--config", type=InputFile("base config"), metavar="FILE.toml", help="The campaign's base config, when it had one.")
@click.option("--providers-catalog", type=InputFile("providers catalog"), metavar="FILE.toml", help="The campaign's providers catalog, when it was not the shipped one.")
@click.option("--task-suite", type=InputDir(), metavar="DIR", help="The campaign's task suite directory, when it ran one (each task must be as it was).")
@click.option("--failure-dir", type=OutputDir(), metavar="DIR", help="Private failure bundles, as for campaign coding.")
@click.option("--max-spend-usd", metavar="USD", help="Each provider's spend cap (with --attempt-ceiling-usd), as for campaign coding --campaign.")
@click.option("--max-total-spend-usd", metavar="USD", help="The campaign's spend cap over every provider (with --attempt-ceiling-usd).")
@click.option("--attempt-ceiling-usd", metavar="USD", help="The most one attempt may spend; reserved at admission.")
@db_option
def worker(db: str | None, campaign_id: int | None, providers: str | None, **values) -> None:
    """Claim a provider's lease, run its trials in schedule order, and repeat until none is left.

    Workers on several machines share one store (PostgreSQL; SQLite on one
    machine): one provider's trials never run two at once, and different
    providers run in parallel. The experiment comes from the store; give the
    same --agent, --config, --providers-catalog and --task-suite the campaign was
    started with.
    With nothing to claim, a worker waits while another holds a lease; it exits
    1 when the campaign stopped or was interrupted with trials left, and 3 when
    its circuit breaker halted a provider (its trials wait for --resume).

    \b
    Examples:
      campaign worker --db postgresql+psycopg://me@db/campaigns --campaign-id 3
      campaign worker --db campaign-out/campaign.db --providers anthropic
    """
    with core_errors():
        given = opt.CodingOptions(campaign=True, live=True, **{k: v for k, v in values.items()})
        limits = opt.spend_limits(given)
        wanted = [p.strip() for p in providers.split(",")] if providers is not None else None
        if wanted is not None and not all(wanted):
            raise UsageProblem(f"empty provider name in {providers!r}; give NAME,NAME or leave --providers out for any", option="--providers")
        if wanted is not None and len(set(wanted)) != len(wanted):
            raise UsageProblem(f"a provider is named twice in {providers!r}; name each once", option="--providers")
        engine = open_store(db, create=False)
        try:
            row = repository.get_campaign(engine, campaign_id) if campaign_id is not None else repository.latest_campaign(engine, kind="campaign")
            if row is None:
                raise UsageProblem("no such campaign in this store; start one with campaign coding --campaign", option="--campaign-id")
            inputs = parallel.worker_inputs(engine, row.id, given, os.environ)
            unknown = [p for p in wanted or () if p not in {x.name for x in inputs.providers}]
            if unknown:
                raise UsageProblem(f"not a provider of campaign {row.id}: {', '.join(unknown)}", option="--providers")
            me = leases.WorkerIdentity.of(my_identity())
            leases.ensure_leases(engine, row.id, [p.name for p in inputs.providers])
            tally = run_worker(engine, row.id, inputs, me, providers=wanted, caps=limits)
        finally:
            engine.dispose()
    worked = ", ".join(tally.providers) or "none (nothing left to claim)"
    click.echo(f"worker {me.host}:{me.pid}: ran {tally.attempted} attempts; providers: {worked}")
    if tally.halts:
        # A halted provider's trials are left scheduled: never an exit 0.
        for halt in tally.halts:
            click.echo(f"halted {halt.line()}", err=True)
        click.echo(
            "unfinished: the halted provider's trials are left scheduled; once its upstream answers, "
            "the campaign's own command with --resume runs them",
            err=True,
        )
        sys.exit(EXIT_UNFINISHED)
