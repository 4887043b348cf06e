"""`campaign plan`: extract the plan from a template and compute its canonical digest."""

from __future__ import annotations

from pathlib import Path

import click

from campaign import plan as core
from campaign.cli.common import core_errors
from campaign.cli.paths import InputFile, OutputFile


@click.group()
def plan() -> None:
    """Work with paired plan templates and approved plans (no model calls).

    \b
    Examples:
      campaign plan extract /tmp/demo/template.json /tmp/demo/plan.json
      campaign plan digest /tmp/demo/plan.json
    """


@plan.command()
@click.argument("template", type=InputFile("plan template"))
@click.argument("out", type=OutputFile())
def extract(template: Path, out: Path) -> None:
    """Write the plan object held by TEMPLATE to OUT, for review and approval.

    \b
    Example:
      campaign plan extract /tmp/demo/template.json /tmp/demo/plan.json
    """
    with core_errors():
        core.extract_plan(template, out)
    click.echo(f"plan: {out} (approved: false; review it, set its limits, then run `campaign plan digest {out}`)")


@plan.command()
@click.argument("plan_file", metavar="PLAN", type=InputFile("plan"))
def digest(plan_file: Path) -> None:
    """Print the lowercase SHA-256 of PLAN's canonical JSON (the spec's canonical form).

    \b
    Example:
      DIGEST=$(campaign plan digest /tmp/demo/plan.json)
    """
    with core_errors():
        value = core.digest_plan_file(plan_file)
    click.echo(value)
