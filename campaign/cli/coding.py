"""`campaign coding`: the benchmark's trials, nonpaired or as repeated paired disclosure trials."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from campaign.cli.common import core_errors, db_option
from campaign.lanes import options as opt
from campaign.lanes import multi_provider, nonpaired, paired_live, paired_plan
from campaign.report import write_report

_PATH = click.Path(path_type=Path)


def _nonpaired(options: opt.CodingOptions, db: str | None) -> None:
    result = nonpaired.run(options, db, progress=lambda line: click.echo(line, err=True))
    stopped = f"; stopped: {result.stop_reason}" if result.stop_reason else ""
    click.echo(f"attempted {result.attempted} tasks, {result.passed} verified passes{stopped}")
    click.echo(f"report: {result.output}")
    click.echo(f"store: {result.store} (campaign {result.campaign_id})")


def _live(options: opt.CodingOptions, db: str | None) -> None:
    result = paired_live.run(options, db, progress=lambda line: click.echo(line, err=True), write_output=write_report)
    stopped = f"; stopped: {result.stop_reason} (later trials recorded not_attempted)" if result.stop_reason else ""
    click.echo(f"attempted {result.attempted} of {result.scheduled} scheduled trials, {result.passed} verified passes{stopped}")
    click.echo(f"report: {result.output}")
    click.echo(f"store: {result.store} (campaign {result.campaign_id})")


def _campaign(options: opt.CodingOptions, db: str | None) -> None:
    result = multi_provider.run(options, db, catalog_path=options.providers_catalog, stream=sys.stderr)
    if not result.live:
        click.echo(f"would run {result.scheduled} trials, one at a time, interleaved by pair; nothing ran (add --live to execute)")
        click.echo(f"store: {result.store}")
        return
    stopped = f"; stopped: {result.stop_reason}" if result.stop_reason else ""
    click.echo(f"ran {result.attempted_now} attempts now; {result.left} of {result.scheduled} scheduled trials left{stopped}")
    for path in result.reports:
        click.echo(f"report: {path}")
    click.echo(f"store: {result.store} (campaign {result.campaign_id}); continue with the same options plus --resume")


@click.command(context_settings={"max_content_width": 100})
@click.option("--paired", is_flag=True, help="Repeated paired disclosure trials (baseline vs coding) under the plan gate.")
@click.option("--launcher", type=_PATH, help="The agent executable, inside --source (an installed launcher from another revision is refused). Needed only when the agent profile runs {launcher}; no default.")
@click.option("--source", type=_PATH, metavar="DIR", help="The source checkout whose revision and content are bound [default: git root of the current directory].")
@click.option("--agent", metavar="NAME|FILE.toml", help="Agent profile: a built-in name or a profile file [default: offline].")
@click.option("--model", metavar="PROVIDER:MODEL", help=f"One model route for every variant [default: {opt.DEFAULT_MODEL}].")
@click.option("--tasks", metavar="NAME,NAME", help="Benchmark tasks [default: all twelve].")
@click.option("--repetitions", type=int, metavar="N", help=f"Paired only: positive repetitions per task and variant [default: {opt.DEFAULT_REPETITIONS}].")
@click.option("--seed", type=int, metavar="N", help=f"Paired only: scheduling and uncertainty seed [default: {opt.DEFAULT_SEED}].")
@click.option("--config", type=_PATH, metavar="FILE.toml", help="Paired only, required: base config without runtime.tools.disclosure (keep it outside --source).")
@click.option("--timeout", type=int, metavar="S", help=f"Positive per-attempt deadline in seconds [default: {opt.DEFAULT_TIMEOUT}].")
@click.option("--run-timeout", type=int, metavar="S", help=f"Paired only: positive whole-run deadline in seconds [default: {opt.DEFAULT_RUN_TIMEOUT}].")
@click.option("--profile-python", type=_PATH, metavar="PATH", help="Paired only: Python >= 3.11 for the profiler [default: this interpreter].")
@click.option("--output", type=_PATH, metavar="FILE.json", help="Required. Without --live: the unsigned plan template. Must be outside --source (refused inside: it would change the source digest).")
@click.option("--plan", type=_PATH, metavar="FILE.json", help="Paired --live only: the approved plan object (not the template).")
@click.option("--approve-plan-digest", metavar="SHA256", help="Paired --live only: lowercase SHA-256 of the canonical approved plan.")
@click.option("--live/--no-live", default=None, help="Paired only: allow paid calls once every approval check passes; never implied.")
@click.option("--failure-dir", type=_PATH, metavar="DIR", help="Private failure bundles, outside --source; never upload or commit them.")
@click.option("--campaign", "campaign", is_flag=True, help="Resumable multi-provider campaign (baseline vs coding per provider); --live executes, --resume continues.")
@click.option("--providers", metavar="NAME,NAME", help="Campaign only: providers from the catalog [default: offline].")
@click.option("--variants", metavar="baseline,coding", help="Campaign only: the variants (only baseline,coding is supported).")
@click.option("--control-plane-port", type=int, metavar="PORT", help="Campaign only: a fixed loopback port for the agent runtime's control plane [default: OS-chosen].")
@click.option("--output-dir", type=_PATH, metavar="DIR", help="Campaign only, required: the store (campaign.db) and reports live here.")
@click.option("--resume", is_flag=True, help="Campaign only: continue the campaign in --output-dir from what the store records.")
@click.option("--providers-catalog", type=_PATH, metavar="FILE.toml", help="Campaign only: a providers catalog instead of the shipped one.")
@click.option("--schema-budgets", "schema_budgets", is_flag=False, flag_value="", multiple=True, metavar="ANY", help="Unsupported and always refused: the coding profile ignores budget_tokens, so budget variants would be identical treatments.")
@db_option
def coding(db: str | None, **values) -> None:
    """Run the benchmark: nonpaired, paired (plan, then --live), or as a --campaign.

    Without --paired or --campaign each selected task runs once through the
    agent's own configuration. --paired without --live hashes the source,
    build artifacts, config, fixtures and interpreter, schedules the trials and
    writes the plan template to --output; it runs no trial and calls no model.
    --paired --live runs the approved plan under its spend and stop rules.
    --campaign runs baseline vs coding per provider, resumable with --resume.
    Keep --output, --config, --db and --failure-dir outside --source: a new file
    in the checkout changes the source digest. Option names must be given in full.
    """
    options = opt.CodingOptions(**values)
    with core_errors():
        opt.check_mode(options)
        if options.campaign:
            _campaign(options, db)
            return
        if not options.paired:
            _nonpaired(options, db)
            return
        if options.live:
            _live(options, db)
            return
        result = paired_plan.run(options, db)
    click.echo(
        f"planned {result.scheduled} trials ({result.tasks} tasks x {len(result.variants)} variants x "
        f"{result.repetitions} repetitions); no trial ran, no model was called"
    )
    click.echo(f"plan digest: {result.plan_digest} (template digest, not authorization)")
    click.echo(f"template: {result.output}")
    click.echo(f"store: {result.store} (campaign {result.campaign_id}, state planned)")
    click.echo("next: campaign plan extract TEMPLATE OUT, review and approve OUT, then campaign plan digest OUT")
