"""`campaign power`: how many repetitions, how much money, and what a campaign can detect."""

from __future__ import annotations

import json
import sys

import click

from campaign.cli.common import ROW_ID, SEED, core_errors, db_option
from campaign.lanes import options as opt
from campaign.lanes import power_request as rq
from campaign.power import render
from campaign.report.spread import EXPLAINED
from campaign.store.migrate import open_store


@click.command(context_settings={"max_content_width": 100})
@click.option("--campaign", "campaign_id", type=ROW_ID, metavar="ID", help="The pilot: a finished paired run or campaign in the store.")
@click.option("--provider", metavar="NAME", help="With --campaign: only this provider's pairs and attempts.")
@click.option("--candidate", metavar="VARIANT", help="With --campaign of several candidates: whose pairs against the baseline give the spread [default: the first candidate].")
@click.option("--baseline-rate", type=float, metavar="P", help="No pilot: the baseline's verified-success rate to assume (needs --tasks).")
@click.option("--task-spread", type=float, metavar="SD", help="With --baseline-rate: the between-task standard deviation of the success difference [default: 0].")
@click.option("--tasks", type=int, metavar="N", help="The suite size to plan for [default: the pilot's task clusters].")
@click.option("--effect", type=float, metavar="E", help="Target: detect a success difference of E (0.10 is ten points) ...")
@click.option("--power", type=float, metavar="P", help="... with this probability that the interval excludes 0 [default: 0.8].")
@click.option("--half-width", type=float, metavar="H", help="Target instead: an interval no wider than +/-H.")
@click.option("--confidence", type=float, metavar="C", help="The interval's confidence level [default: the report's 0.95].")
@click.option("--max-repetitions", type=int, metavar="N", help=f"The table's last row [default: {rq.DEFAULT_MAX_REPETITIONS}].")
@click.option("--simulations", type=int, metavar="N", help="Simulated campaigns per row [default: 1000].")
@click.option("--seed", type=SEED, metavar="N", help="The planned campaign's seed and the simulations' [default: the pilot's].")
@click.option("--max-spend-usd", metavar="USD", help="Each provider's cap, as for campaign coding --campaign (with --attempt-ceiling-usd).")
@click.option("--max-total-spend-usd", metavar="USD", help="The cap over every provider (with --attempt-ceiling-usd).")
@click.option("--attempt-ceiling-usd", metavar="USD", help="The most one attempt may spend.")
@click.option("--parallel-providers", type=int, metavar="N", help="Forecast wall time with N workers too [default: one per provider].")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@db_option
def power(db: str | None, as_json: bool, max_spend_usd: str | None, max_total_spend_usd: str | None, attempt_ceiling_usd: str | None, **values) -> None:
    """Plan repetitions and spend from a pilot (or stated assumptions) before paying.

    Simulates campaigns of 1, 2, ... repetitions by resampling the pilot's task
    clusters and repetitions, runs the report's own interval on each, and prints
    per row the interval's expected half-width, the power at --effect, the
    smallest effect detected with --power, and the forecast spend and wall time;
    then the fewest repetitions that meet the target. Exits 1 when the pilot
    cannot show the spread a target needs (the spend forecast is still printed).

    \b
    Examples:
      campaign power --campaign 1 --effect 0.10 --db pilot-out/campaign.db
      campaign power --campaign 1 --half-width 0.05 --tasks 50 --max-total-spend-usd 40 --attempt-ceiling-usd 1
      campaign power --baseline-rate 0.6 --tasks 12 --effect 0.15 --json
    """
    with core_errors():
        caps = opt.spend_limits(opt.CodingOptions(max_spend_usd=max_spend_usd, max_total_spend_usd=max_total_spend_usd, attempt_ceiling_usd=attempt_ceiling_usd))
        options = rq.PowerOptions(caps=caps, **values)
        rq.check(options)
        if options.campaign_id is None:
            plan, source = rq.from_assumptions(options)
        else:
            engine = open_store(db, readonly=True)
            try:
                plan, source = rq.from_pilot(engine, options)
            finally:
                engine.dispose()
    if as_json:
        click.echo(json.dumps(render.as_json(plan, source), indent=2))
    else:
        click.echo("\n".join(render.as_text(plan, source)))
    why = render.why_none(plan)
    if why in EXPLAINED:
        click.echo(f"refused: the target cannot be assessed from this pilot ({why}); the spend forecast above stands", err=True)
        sys.exit(1)
