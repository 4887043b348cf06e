"""Writing reports: `campaign report` (JSON + adjacent Markdown + SVG) and `campaign export`.

Both regenerate everything from the store. ``export`` writes the sanitized
pair under fixed names for sharing, after re-checking that the JSON is a fixed
point of the allowlist (nothing the schema would change), and refuses a
plan-only campaign rather than label a plan template a live result.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import Engine

from campaign.errors import CampaignError, UsageProblem
from campaign.report import integrity
from campaign.report.forest import render_svg
from campaign.report.live import build_report, resolve_campaign
from campaign.report.markdown import render_markdown
from campaign.report.schema import REPORT_SCHEMA, is_allowlisted
from campaign.store.models import Campaign


@dataclass(frozen=True)
class Written:
    campaign_id: int
    json: Path
    markdown: Path
    svg: Path


# Row lists are written one compact object per line: readable, diffable, and
# encoded by json's C encoder with one reused encoder (an indented dump of 100,000
# trials takes seconds; a fresh encoder per row costs a tenth of the encoding).
_ROW_LISTS = ("trials", "not_attempted_trials", "spend_only_attempts")
_ROW_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, check_circular=False, separators=(",", ":"))
_ROWS_PER_CHUNK = 4096


def iter_json(report: dict[str, Any]) -> Iterator[str]:
    """The report's JSON text in pieces (a 100,000-trial report is ~150 MB: it is
    streamed to its file, never joined into one string first)."""
    yield "{\n"
    last = len(report) - 1
    for n, (key, value) in enumerate(report.items()):
        yield f"  {json.dumps(key)}: "
        if key in _ROW_LISTS and value:
            yield "[\n    "
            for start in range(0, len(value), _ROWS_PER_CHUNK):
                if start:
                    yield ",\n    "
                yield ",\n    ".join(map(_ROW_ENCODER.encode, value[start : start + _ROWS_PER_CHUNK]))
            yield "\n  ]"
        else:
            yield json.dumps(value, indent=2, ensure_ascii=True, allow_nan=False).replace("\n", "\n  ")
        yield ",\n" if n < last else "\n}\n"


def dumps(report: dict[str, Any]) -> str:
    """The report as JSON text: indented, with one line per trial."""
    return "".join(iter_json(report))


def render(report: dict[str, Any], svg_name: str) -> tuple[str, str, str]:
    """(JSON, Markdown, SVG) texts of a sanitized report."""
    return dumps(report), render_markdown(report, svg_name), render_svg(report)


def write_report(engine: Engine, campaign_id: int | None, output: Path, *, provider: str | None = None, allow_unverified: bool = False) -> Written:
    """`campaign report`: the campaign (default: the latest) to OUTPUT.json, .md and .svg beside it.

    ``provider`` scopes a multi-provider campaign's report to that provider's trials.
    Refuses (``UnverifiedStore``) when the attempt rows fail their hash chain, unless
    ``allow_unverified``: then the report is written and says it is unverified.
    """
    output = Path(output)
    if output.suffix != ".json":
        raise UsageProblem(f"{output.name} should end in .json (the Markdown and SVG are written beside it)", option="--output")
    campaign = resolve_campaign(engine, campaign_id)
    report = build_report(engine, campaign.id, provider=provider, integrity=_verified(engine, campaign, allow_unverified))
    return _write(report, output, output.with_suffix(".md"), output.with_suffix(".svg"))


def export_report(engine: Engine, campaign_id: int | None, output_dir: Path, *, allow_unverified: bool = False) -> Written:
    """`campaign export`: the sanitized pair (and plot) for sharing, under fixed names in OUTPUT_DIR."""
    campaign = resolve_campaign(engine, campaign_id)
    report = build_report(engine, campaign.id, integrity=_verified(engine, campaign, allow_unverified))
    check_allowlisted(report)
    base = Path(output_dir) / f"campaign-{campaign.id}-{report['kind']}"
    return _write(report, base.with_suffix(".json"), base.with_suffix(".md"), base.with_suffix(".svg"))


def _verified(engine: Engine, campaign: Campaign, allow_unverified: bool) -> integrity.Integrity:
    """The chain check, refusing a failed one unless the operator allowed it.

    A nonpaired run is refused by ``build_report`` for what it is, so its chain
    is not verified here.
    """
    if campaign.kind == "nonpaired":
        return integrity.NOT_CHECKED
    checked = integrity.check(engine, campaign.id)
    if not allow_unverified:
        integrity.refuse_unless_verified(checked, campaign.id)
    return checked


def check_allowlisted(report: dict[str, Any]) -> None:
    """The report must pass the allowlist unchanged (a second line of defence)."""
    if not is_allowlisted(report, REPORT_SCHEMA):
        raise CampaignError("the report does not pass the sharing allowlist unchanged; refusing to export it")


def _write(report: dict[str, Any], json_path: Path, md_path: Path, svg_path: Path) -> Written:
    markdown, svg = render_markdown(report, svg_path.name), render_svg(report)
    for path, content in ((json_path, iter_json(report)), (md_path, (markdown,)), (svg_path, (svg,))):
        _atomic_write(path, content)
    return Written(int(report["campaign"]["id"]), json_path, md_path, svg_path)


def _atomic_write(path: Path, pieces: Iterable[str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:  # the commands check the place first; this is what changed since
        raise CampaignError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(pieces)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
