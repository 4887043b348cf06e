"""The adapter type every output adapter is an instance of.

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
from campaign.errors import Interrupted

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
        except Interrupted:
            raise  # the operator's stop, not output the adapter could not read
        except Exception:  # noqa: BLE001 - the safety net is the point; see module docstring
            return unknown_record("unparseable_output", input_includes_cached=self.input_includes_cached)
