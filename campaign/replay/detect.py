"""What the opening of a conversation says: which task, which directory, which protocol.

The server keeps no state, so it reads these off every request again. Only the
text before the first assistant turn counts (system prompt, developer and user
messages): tool output later on could quote anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from campaign import benchmark
from campaign.replay.tools import SUBMIT_MARKER

# Claude Code's system prompt has "Working directory: /path" in its <env> block;
# Codex sends "<cwd>/path</cwd>" inside an <environment_context> user message.
_CWD_PATTERNS = (
    re.compile(r"^\s*Working directory:\s*(/\S[^\n]*?)\s*$", re.M),
    re.compile(r"<cwd>\s*(/[^<\n]*?)\s*</cwd>"),
)


def _normalised(text: str) -> str:
    return " ".join(text.split())


def find_task(texts: Iterable[str], tasks: Sequence[benchmark.Task] | None = None) -> benchmark.Task | None:
    """The task (of ``tasks``, by default the built-in ones) whose prompt appears
    (whitespace-normalised) in the texts."""
    haystack = _normalised("\n".join(texts))
    for task in benchmark.all_tasks() if tasks is None else tasks:
        if _normalised(task.prompt) in haystack:
            return task
    return None


def find_cwd(texts: Iterable[str]) -> str | None:
    for text in texts:
        for pattern in _CWD_PATTERNS:
            match = pattern.search(text)
            if match:
                return match.group(1)
    return None


def action_fence(texts: Iterable[str]) -> str:
    """The fence the text protocol expects: mini-swe-agent 2.x's text mode asks for
    ```mswea_bash_command blocks, its 1.x protocol for ```bash."""
    return "mswea_bash_command" if any("```mswea_bash_command" in text for text in texts) else "bash"


def wants_submit_marker(texts: Iterable[str]) -> bool:
    """mini-swe-agent's prompts name the command that ends its run."""
    return any(SUBMIT_MARKER in text for text in texts)
