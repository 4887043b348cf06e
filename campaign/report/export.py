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
from typing import Any

from sqlalchemy import Engine

from campaign.errors import CampaignError, UsageProblem
from campaign.report.forest import render_svg
from campaign.report.live import build_report, resolve_campaign
from campaign.report.markdown import render_markdown
from campaign.report.schema import REPORT_SCHEMA, sanitize


@dataclass(frozen=True)
class Written:
    campaign_id: int
    json: Path
    markdown: Path
    svg: Path


# Row lists are written one compact object per line: readable, diffable, and
# encoded by json's C encoder (an indented dump of 100,000 trials takes seconds).
_ROW_LISTS = ("trials", "not_attempted_trials")


def dumps(report: dict[str, Any]) -> str:
    """The report as JSON text: indented, with one line per trial."""
    parts = []
    for key, value in report.items():
        if key in _ROW_LISTS and value:
            text = "[\n" + ",\n".join("    " + json.dumps(row, ensure_ascii=True, allow_nan=False) for row in value) + "\n  ]"
        else:
            text = json.dumps(value, indent=2, ensure_ascii=True, allow_nan=False).replace("\n", "\n  ")
        parts.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def render(report: dict[str, Any], svg_name: str) -> tuple[str, str, str]:
    """(JSON, Markdown, SVG) texts of a sanitized report."""
    return dumps(report), render_markdown(report, svg_name), render_svg(report)


def write_report(engine: Engine, campaign_id: int | None, output: Path, *, provider: str | None = None) -> Written:
    """`campaign report`: the campaign (default: the latest) to OUTPUT.json, .md and .svg beside it.

    ``provider`` scopes a multi-provider campaign's report to that provider's trials.
    """
    output = Path(output)
    if output.suffix != ".json":
        raise UsageProblem(f"{output.name} should end in .json (the Markdown and SVG are written beside it)", option="--output")
    campaign = resolve_campaign(engine, campaign_id)
    report = build_report(engine, campaign.id, provider=provider)
    return _write(report, output, output.with_suffix(".md"), output.with_suffix(".svg"))


def export_report(engine: Engine, campaign_id: int | None, output_dir: Path) -> Written:
    """`campaign export`: the sanitized pair (and plot) for sharing, under fixed names in OUTPUT_DIR."""
    campaign = resolve_campaign(engine, campaign_id)
    report = build_report(engine, campaign.id)
    check_allowlisted(report)
    base = Path(output_dir) / f"campaign-{campaign.id}-{report['kind']}"
    return _write(report, base.with_suffix(".json"), base.with_suffix(".md"), base.with_suffix(".svg"))


def check_allowlisted(report: dict[str, Any]) -> None:
    """The report must pass the allowlist unchanged (a second line of defence)."""
    again, changed = sanitize(report, REPORT_SCHEMA)
    if again != report or any(changed.as_dict().values()):
        raise CampaignError("the report does not pass the sharing allowlist unchanged; refusing to export it")


def _write(report: dict[str, Any], json_path: Path, md_path: Path, svg_path: Path) -> Written:
    text, markdown, svg = render(report, svg_path.name)
    for path, content in ((json_path, text), (md_path, markdown), (svg_path, svg)):
        _atomic_write(path, content)
    return Written(int(report["campaign"]["id"]), json_path, md_path, svg_path)


def _atomic_write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
