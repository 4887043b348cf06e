"""Which reply a conversation gets next: the replay provider's only decision.

The server is stateless, so everything comes from the request: the task (named
by ``--task`` or found in the opening text), the tools offered, and how many
assistant turns the history already holds. That count is the step number; a
retried request therefore gets the same step again, and a conversation that
goes on past the script keeps getting its final answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from campaign.benchmark import TaskSuite
from campaign.replay import detect
from campaign.replay.scripts import NO_SCRIPT_TEXT, no_script, script_for
from campaign.replay.steps import Usage
from campaign.replay.tools import Action, Environment, ToolSpec, plan


@dataclass(frozen=True)
class Conversation:
    """A request reduced to what the replay needs, whatever its wire format."""

    model: str
    tools: tuple[ToolSpec, ...]
    assistant_turns: int
    opening: tuple[str, ...]
    stream: bool = False
    include_usage: bool = False


def count_turns(is_model: Iterable[bool]) -> int:
    """Runs of consecutive model messages: one response may be stored as several messages."""
    turns, previous = 0, False
    for current in is_model:
        turns += current and not previous
        previous = current
    return turns


@dataclass(frozen=True)
class Reply:
    action: Action
    usage: Usage
    step: int


def next_reply(conversation: Conversation, task_name: str | None = None, suite: TaskSuite | None = None) -> Reply:
    """The reply to ``conversation``: its task's next step (a task of ``suite``, by
    default a built-in one, named or found from the opening text)."""
    name = task_name
    if name is None:
        found = detect.find_task(conversation.opening, suite.tasks if suite is not None else None)
        name = found.name if found else None
    suite_root = None if suite is None or suite.builtin else str(suite.root)
    steps = script_for(name, suite_root) if name else no_script()
    opening = conversation.opening
    env = Environment(detect.find_cwd(opening), detect.wants_submit_marker(opening), detect.action_fence(opening))
    if name is None and not env.submit_marker:
        # No script: a plain final answer, whatever the tools (mini-swe-agent excepted,
        # which needs its marker command to stop).
        return Reply(Action(NO_SCRIPT_TEXT), steps[0].usage, 0)
    planned = plan(conversation.tools, steps, env)  # never empty: a final answer always maps
    index = min(conversation.assistant_turns, len(planned) - 1)
    action, usage = planned[index]
    return Reply(action, usage, index)
