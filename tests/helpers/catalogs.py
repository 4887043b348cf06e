"""Provider catalogs for tests: copies of the shipped offline provider under other names."""

from __future__ import annotations

import re
from pathlib import Path

from campaign.providers import BUILTIN_CATALOG


def offline_block(catalog: Path = BUILTIN_CATALOG) -> str:
    """The ``[providers.offline]`` table and its sub-tables, wherever it sits in the catalog."""
    text = catalog.read_text()
    block = text[text.index("[providers.offline]") :]
    following = re.search(r"^\[providers\.(?!offline[.\]])", block, re.M)
    return block if following is None else block[: following.start()]


def offline_copies(names: tuple[str, ...] | list[str], *, extra: dict[str, str] | None = None) -> str:
    """One offline provider per name (route = name), each with ``extra`` lines after its route."""
    block = offline_block()
    out = []
    for name in names:
        route = f'route = "{name}"' + (f"\n{extra[name]}" if extra and name in extra else "")
        out.append(block.replace("[providers.offline", f"[providers.{name}").replace('route = "offline"', route))
    return "\n".join(out)
