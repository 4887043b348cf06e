"""Command line: ``logstat summary FILE...`` and ``logstat top FILE...``.

Each command computes plain data first (``summarize`` / ``top_messages``); the
renderers turn that data into the text table or a JSON document, so both formats
always agree.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from . import __version__
from .parse import LEVELS, read_records

FORMATS = ("text", "json")


@dataclass(frozen=True)
class Summary:
    total: int
    levels: dict[str, int]  # only levels that occur, in LEVELS order


@dataclass(frozen=True)
class Top:
    entries: list[tuple[str, int]]  # (message, count), most frequent first


def summarize(files: list[str]) -> Summary:
    counts = Counter(record.level for record in read_records(files))
    levels = {level: counts[level] for level in LEVELS if counts[level]}
    return Summary(total=sum(counts.values()), levels=levels)


def top_messages(files: list[str], limit: int, level: str | None) -> Top:
    counts = Counter(
        record.message
        for record in read_records(files)
        if level is None or record.level == level
    )
    return Top(entries=counts.most_common(limit))


def summary_text(summary: Summary) -> str:
    rows = [f"{'LEVEL':<10} {'COUNT':>7}"]
    rows += [f"{level:<10} {count:>7}" for level, count in summary.levels.items()]
    rows.append(f"{'total':<10} {summary.total:>7}")
    return "\n".join(rows) + "\n"


def summary_json(summary: Summary) -> str:
    return json.dumps({"total": summary.total, "levels": summary.levels}, indent=2) + "\n"


def top_text(top: Top) -> str:
    rows = [f"{'COUNT':>7}  MESSAGE"]
    rows += [f"{count:>7}  {message}" for message, count in top.entries]
    return "\n".join(rows) + "\n"


def top_json(top: Top) -> str:
    entries = [{"message": message, "count": count} for message, count in top.entries]
    return json.dumps({"top": entries}, indent=2) + "\n"


_RENDERERS: dict[str, dict[str, Callable]] = {
    "summary": {"text": summary_text, "json": summary_json},
    "top": {"text": top_text, "json": top_json},
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="logstat", description="Statistics over application log files.")
    parser.add_argument("--version", action="version", version=f"logstat {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    summary = commands.add_parser("summary", help="count records per level")
    summary.add_argument("files", nargs="+", metavar="FILE")

    top = commands.add_parser("top", help="most frequent messages")
    top.add_argument("files", nargs="+", metavar="FILE")
    top.add_argument("-n", "--limit", type=int, default=10, help="how many messages to show (default 10)")
    top.add_argument("--level", choices=LEVELS, help="only count messages of this level")

    for command in (summary, top):
        command.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    return parser


def compute(args: argparse.Namespace) -> Summary | Top:
    if args.command == "summary":
        return summarize(args.files)
    return top_messages(args.files, args.limit, args.level)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = compute(args)
    except FileNotFoundError as exc:
        print(f"logstat: {exc.filename}: no such file", file=sys.stderr)
        return 1
    sys.stdout.write(_RENDERERS[args.command][args.format](result))
    return 0
