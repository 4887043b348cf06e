"""Output adapters: each turns one client's machine-readable output into an AgentRecord.

An adapter is a name, the client's cached-token convention, and a parse function
``parse(body, exit_code) -> AgentRecord`` over the decoded, non-empty stdout.
``Adapter.parse`` decodes once for every adapter and never raises: bytes that are
not UTF-8, or output that makes a parser fail, is by definition output we could
not read, so it becomes an ``unparseable_output`` record with every counter None;
no output at all is ``empty_output``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from campaign.agents.adapters._read import decode
from campaign.agents.record import AgentRecord, unknown_record

ParseFn = Callable[[str, "int | None"], AgentRecord]


@dataclass(frozen=True)
class Adapter:
    name: str
    # Whether the client's input-token figure already contains cache reads.
    input_includes_cached: bool
    parse_output: ParseFn

    def parse(self, stdout: bytes, stderr: bytes, exit_code: int | None) -> AgentRecord:
        body = decode(stdout)
        if body is None:
            return unknown_record("unparseable_output", input_includes_cached=self.input_includes_cached)
        if not body.strip():
            return unknown_record("empty_output", input_includes_cached=self.input_includes_cached)
        try:
            return self.parse_output(body, exit_code)
        except Exception:  # noqa: BLE001 - the safety net is the point; see module docstring
            return unknown_record("unparseable_output", input_includes_cached=self.input_includes_cached)


def _registry() -> dict[str, Adapter]:
    # Imported here so each adapter module can import this package's helpers freely.
    from campaign.agents.adapters import claude_code, codex, gemini, generic, mini_swe_agent, opencode

    modules = (generic, claude_code, codex, gemini, opencode, mini_swe_agent)
    return {m.ADAPTER.name: m.ADAPTER for m in modules}


def adapter_names() -> tuple[str, ...]:
    return tuple(sorted(_registry()))


def get_adapter(name: str) -> Adapter:
    """The built-in adapter called ``name``; KeyError names the known ones."""
    adapters = _registry()
    if name not in adapters:
        raise KeyError(f"unknown output adapter {name!r}; known: {', '.join(sorted(adapters))}")
    return adapters[name]
