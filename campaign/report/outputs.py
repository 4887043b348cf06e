"""Where a report may be written: checked before a lane's first trial, not after paying for all of them.

Apart from the writer (``report.export``) so that a lane can check its outputs
without importing the report builder and its statistics (numpy) at start-up.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from campaign.errors import UsageProblem


def check_report_output(output: Path, option: str) -> None:
    """OUTPUT.json and the .md and .svg written beside it can be written: a lane that ends
    in a report checks this before its first trial, not after paying for all of them."""
    if output.suffix != ".json":
        raise UsageProblem(f"{output.name} should end in .json (the Markdown and SVG are written beside it)", option=option)
    replaceable((output, output.with_suffix(".md"), output.with_suffix(".svg")), option)


def replaceable(paths: Iterable[Path], option: str) -> None:
    """Each file the command writes is new or a file it may replace: a directory (or a
    FIFO, a device) there is refused before anything is built or written."""
    for path in paths:
        if path.exists() and not path.is_file():
            raise UsageProblem(f"{path} is there and is not a file the report can replace; move it, or write the report elsewhere", option=option)
