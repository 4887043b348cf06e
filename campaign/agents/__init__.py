"""Agents: profiles that say how to launch a client, adapters that read its output.

- ``record``: ``AgentRecord``, what one run showed (unknown is None, never 0).
- ``adapters``: ``get_adapter(name).parse(stdout, stderr, exit_code)`` per client.
- ``profiles``: ``load_profile(name_or_path, source)`` and argv rendering.
- ``offline``: the free offline agent (``python -m campaign.agents.offline``).
- ``GENERIC_FORMAT.md``: the output format for custom agents.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from campaign.agents.adapters import Adapter, adapter_names, get_adapter
    from campaign.agents.profile_model import AgentProfile
    from campaign.agents.profiles import load_profile
    from campaign.agents.record import AgentRecord, TurnUsage, nothing_billed, turn_usage_matched, unknown_record

# Imported on first use: the offline agent, started once per attempt as
# ``python -m campaign.agents.offline``, needs none of the profiles or adapters, and
# loading them all cost it about half its start-up.
_EXPORTS = {
    "Adapter": "adapters",
    "adapter_names": "adapters",
    "get_adapter": "adapters",
    "AgentProfile": "profile_model",
    "load_profile": "profiles",
    "AgentRecord": "record",
    "TurnUsage": "record",
    "nothing_billed": "record",
    "turn_usage_matched": "record",
    "unknown_record": "record",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'campaign.agents' has no attribute {name!r}")
    return getattr(importlib.import_module(f"campaign.agents.{module}"), name)
