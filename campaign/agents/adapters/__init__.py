"""Output adapters: each turns one client's machine-readable output into an AgentRecord.

The ``Adapter`` type lives in ``base`` beside the shared readers (``_read``,
``_disclosure``); each client's module builds one from them, and this package
only gathers them: imports run one way, from here down.
"""

from __future__ import annotations

from campaign.agents.adapters import claude_code, codex, gemini, generic, mini_swe_agent, opencode
from campaign.agents.adapters.base import Adapter, ParseFn

ADAPTERS: dict[str, Adapter] = {m.ADAPTER.name: m.ADAPTER for m in (generic, claude_code, codex, gemini, opencode, mini_swe_agent)}


def adapter_names() -> tuple[str, ...]:
    return tuple(sorted(ADAPTERS))


def get_adapter(name: str) -> Adapter:
    """The built-in adapter called ``name``; KeyError names the known ones."""
    if name not in ADAPTERS:
        raise KeyError(f"unknown output adapter {name!r}; known: {', '.join(sorted(ADAPTERS))}")
    return ADAPTERS[name]


__all__ = ["ADAPTERS", "Adapter", "ParseFn", "adapter_names", "get_adapter"]
