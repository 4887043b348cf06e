"""Agents: profiles that say how to launch a client, adapters that read its output.

- ``record``: ``AgentRecord``, what one run showed (unknown is None, never 0).
- ``adapters``: ``get_adapter(name).parse(stdout, stderr, exit_code)`` per client.
- ``profiles``: ``load_profile(name_or_path, source)`` and argv rendering.
- ``offline``: the free offline agent (``python -m campaign.agents.offline``).
- ``GENERIC_FORMAT.md``: the output format for custom agents.
"""

from campaign.agents.adapters import Adapter, adapter_names, get_adapter
from campaign.agents.profile_model import AgentProfile
from campaign.agents.profiles import load_profile
from campaign.agents.record import AgentRecord, TurnUsage, nothing_billed, turn_usage_matched, unknown_record

__all__ = [
    "Adapter",
    "AgentProfile",
    "AgentRecord",
    "TurnUsage",
    "adapter_names",
    "get_adapter",
    "load_profile",
    "nothing_billed",
    "turn_usage_matched",
    "unknown_record",
]
