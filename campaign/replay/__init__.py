"""The replay provider: a stateless loopback fake model server for client tests.

It speaks the Anthropic Messages, OpenAI Chat Completions and OpenAI Responses
formats (streamed and not) and answers each request with the next step of a
script that makes the client apply a benchmark task's reference solution through
its own tools. Nothing is paid for and nothing leaves the machine, so a real
agent client can be run end to end against it. Every usage figure it reports is
scripted (``scripted_total_usage``), which lets tests check accounting exactly.

Modules: ``steps`` (abstract steps and their usage), ``scripts`` (one script per
task, generated from its files), ``detect`` (task, cwd and protocol from the
opening text), ``tools`` (a step onto the offered tools), ``turns`` (which step a
request gets), ``wire/`` (the three formats), ``faults``, ``app`` (the aiohttp
application) and ``server`` (running it: a process or a test's thread).
"""

from __future__ import annotations

from campaign.replay.app import build_app
from campaign.replay.scripts import script_for, scripted_total_usage
from campaign.replay.server import ANNOUNCE_PATTERN, run, running_in_thread, start
from campaign.replay.steps import Usage

__all__ = [
    "ANNOUNCE_PATTERN",
    "Usage",
    "build_app",
    "run",
    "running_in_thread",
    "script_for",
    "scripted_total_usage",
    "start",
]
