"""`campaign probe`: the tool catalog and wire fingerprint a client sends under each variant, measured for free."""

from __future__ import annotations

import os

import click

from campaign import benchmark
from campaign.cli.common import core_errors
from campaign.cli.paths import AgentProfileRef
from campaign.lanes.probe import run_probe
from campaign.profiler.fingerprint import PART_WORDS
from campaign.providers import REPLAY


@click.command()
@click.option("--agent", type=AgentProfileRef(), metavar="NAME|FILE.toml", required=True, help="Built-in agent profile name or a profile FILE.toml.")
@click.option("--model", required=True, metavar="PROVIDER:MODEL", help="The route the live run will use; its MODEL name is sent to the replay provider.")
@click.option("--task", "task_name", default=benchmark.task_names()[0], show_default=True, help="Benchmark task the probe replays.")
def probe(agent: str, model: str, task_name: str) -> None:
    """Run the client once per variant against the replay provider and show what each sends.

    Each variant's tool catalog and wire fingerprint (the catalog, system prompt, model,
    reasoning, sampling and output cap, digested), and what each variant changes from the
    first. No provider is called and nothing is spent. The same measurement binds the
    expected fingerprints of an applied_profile_from = "wire" profile into a plan.

    \b
    Example:
      campaign probe --agent claude-code --model anthropic:claude-sonnet-4-5
    """
    with core_errors():
        result = run_probe(agent, model, task_name, os.environ)
    click.echo(f"agent: {result.agent}" + (f" (client {result.client_version})" if result.client_version else ""))
    click.echo(f"model: {result.model} (replayed against the {REPLAY} provider; nothing spent)")
    for variant, diagnostics in result.measured.items():
        counts = diagnostics.get("catalog_tool_counts") or {}
        tokens = diagnostics.get("catalog_schema_tokens") or {}
        sets = diagnostics.get("catalog_sets") or {}
        for digest in diagnostics.get("catalog_digests") or []:
            # The set digest is what an experiment binds (format 2); the order sent is the client's.
            click.echo(f"{variant}: catalog {sets.get(digest)} tools {counts.get(digest)} schema_tokens {tokens.get(digest)} (as sent: {digest})")
        for digest in diagnostics.get("fingerprint_digests") or []:
            click.echo(f"{variant}: fingerprint {digest}")
    baseline = next(iter(result.measured), None)
    for variant, parts in result.differences().items():
        click.echo(f"{variant}: differs from {baseline} in {', '.join(PART_WORDS[p] for p in parts) or 'nothing the wire shows'}")
