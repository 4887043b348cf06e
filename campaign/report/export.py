"""Writing reports: `campaign report` (JSON + adjacent Markdown + SVG) and `campaign export`.

Both regenerate everything from the store. ``export`` writes the sanitized
pair under fixed names for sharing, after re-checking that the JSON is a fixed
point of the allowlist (nothing the schema would change), and refuses a
plan-only campaign rather than label a plan template a live result.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from sqlalchemy import Engine

from campaign.bulk import collector_paused
from campaign.errors import CampaignError
from campaign.report.forest import render_svg
from campaign.report.build import KIND, build_report, resolve_campaign
from campaign.report.markdown import render_markdown
from campaign.report.allowlist import is_allowlisted
from campaign.report.outputs import check_report_output, replaceable
from campaign.report.schema import REPORT_SCHEMA


@dataclass(frozen=True)
class Written:
    campaign_id: int
    json: Path
    markdown: Path
    svg: Path


# Row lists are written one compact object per line: readable and diffable. They are
# encoded by orjson, whose bytes are the json module's for what the allowlist lets
# through (ASCII identifiers, enums, digests, finite numbers), with one exception
# checked for: floats below 1e-4, which it spells 0.00001 or 1e-7 where json writes
# 1e-05 and 1e-07. A chunk that may hold one (or any byte json would escape) is
# written by the json module instead, so the file is the same either way.
_ROW_LISTS = ("trials", "not_attempted_trials", "spend_only_attempts")
_ROW_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, check_circular=False, separators=(",", ":"))
# A chunk is encoded, joined and written while it is still in the CPU's cache: 256 rows
# (~400 kB) encode and write 157 MB in 0.2 s where 8,192-row chunks (12 MB, fresh
# pages each time) took 0.9 s.
_ROWS_PER_CHUNK = 256
_ROW_SEPARATOR = b",\n    "
_ORJSON_SMALL_FLOAT = re.compile(rb"[:,\[]-?0\.0000|[0-9]e-[1-9](?![0-9])")


def iter_json(report: dict[str, Any]) -> Iterator[bytes]:
    """The report's JSON text in pieces (a 100,000-trial report is ~150 MB: it is
    streamed to its file, never joined into one string first)."""
    yield b"{\n"
    last = len(report) - 1
    for n, (key, value) in enumerate(report.items()):
        yield f"  {json.dumps(key)}: ".encode()
        if key in _ROW_LISTS and value:
            yield b"[\n    "
            for start in range(0, len(value), _ROWS_PER_CHUNK):
                if start:
                    yield _ROW_SEPARATOR
                yield _rows_json(value[start : start + _ROWS_PER_CHUNK])
            yield b"\n  ]"
        else:
            yield json.dumps(value, indent=2, ensure_ascii=True, allow_nan=False).replace("\n", "\n  ").encode()
        yield b",\n" if n < last else b"\n}\n"


def _rows_json(rows: list[dict[str, Any]]) -> bytes:
    """Compact objects joined by ``,\\n    ``, each encoded on its own (no row boundary to
    find in one long encoding afterwards); the json module writes a chunk that may hold
    what orjson spells its own way."""
    data = _ROW_SEPARATOR.join(map(orjson.dumps, rows))
    if data.isascii() and b"\x7f" not in data and not ((b"e-" in data or b"0.0000" in data) and _ORJSON_SMALL_FLOAT.search(data)):
        return data
    return _ROW_SEPARATOR.join(_ROW_ENCODER.encode(row).encode() for row in rows)


def dumps(report: dict[str, Any]) -> str:
    """The report as JSON text: indented, with one line per trial."""
    return b"".join(iter_json(report)).decode("ascii")


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
    check_report_output(output, "--output")
    with collector_paused():
        built = build_report(engine, resolve_campaign(engine, campaign_id).id, provider=provider, require_verified=not allow_unverified)
        return _write(built, output, output.with_suffix(".md"), output.with_suffix(".svg"))


def export_report(engine: Engine, campaign_id: int | None, output_dir: Path, *, allow_unverified: bool = False) -> Written:
    """`campaign export`: the sanitized pair (and plot) for sharing, under fixed names in OUTPUT_DIR."""
    campaign = resolve_campaign(engine, campaign_id)
    base = Path(output_dir) / f"campaign-{campaign.id}-{KIND}"
    replaceable((base.with_suffix(".json"), base.with_suffix(".md"), base.with_suffix(".svg")), "--output-dir")
    with collector_paused():
        return _export(build_report(engine, campaign.id, require_verified=not allow_unverified), base)


def _export(report: dict[str, Any], base: Path) -> Written:
    check_allowlisted(report)
    return _write(report, base.with_suffix(".json"), base.with_suffix(".md"), base.with_suffix(".svg"))


def check_allowlisted(report: dict[str, Any]) -> None:
    """The report must pass the allowlist unchanged (a second line of defence)."""
    if not is_allowlisted(report, REPORT_SCHEMA):
        raise CampaignError("the report does not pass the sharing allowlist unchanged; refusing to export it")


# Both keep the cyclic collector paused from the store's rows to the written files: a
# report is a few hundred thousand acyclic objects, and the first collection after the
# pause would walk them all (a full pass costs a quarter of the whole report). They hand
# the report to the writer without keeping it, so it is freed before the pause ends.
def _write(report: dict[str, Any], json_path: Path, md_path: Path, svg_path: Path) -> Written:
    markdown, svg = render_markdown(report, svg_path.name), render_svg(report)
    for path, content in ((json_path, iter_json(report)), (md_path, (markdown.encode(),)), (svg_path, (svg.encode(),))):
        _atomic_write(path, content)
    return Written(int(report["campaign"]["id"]), json_path, md_path, svg_path)


def _atomic_write(path: Path, pieces: Iterable[bytes]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", dir=path.parent)
    except OSError as exc:  # the commands check the place first; this is what changed since
        raise CampaignError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(pieces)
        os.replace(tmp, path)
        _sweep(path)
    except OSError as exc:  # what changed since the check (a directory made there, a full disk)
        Path(tmp).unlink(missing_ok=True)
        raise CampaignError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# A writer SIGKILLed mid-write leaves its temporary file (a 100k-trial report's is 150 MB),
# and nothing else would ever remove it: the next write of the same file removes those of
# writers that are gone (the name holds the writer's pid; as a live writer's file grows, its
# mtime stays fresh, so ten seconds untouched also covers another host's writer on a shared
# directory) and any an hour old (no writer takes that long).
DEAD_WRITER_S = 10.0
STALE_TEMP_S = 3600.0


def _sweep(path: Path, now: float | None = None) -> None:
    """Remove the temporary files that earlier, dead writes of ``path`` left behind."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(?:(\d+)\.)?[a-z0-9_]{{8}}")
    now = time.time() if now is None else now
    with os.scandir(path.parent) as entries:
        for entry in entries:
            found = pattern.fullmatch(entry.name)
            try:
                if found is None or not entry.is_file(follow_symlinks=False):
                    continue
                age = now - entry.stat(follow_symlinks=False).st_mtime
                if age > STALE_TEMP_S or (age > DEAD_WRITER_S and found[1] is not None and not _alive(int(found[1]))):
                    os.unlink(entry.path)
            except OSError:
                continue  # gone already, or not ours to remove: never a reason to fail the write


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process, or no pid at all: left to the age rule
    return True
