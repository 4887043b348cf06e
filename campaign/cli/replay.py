"""`campaign replay-server`: the scripted fake model server, for testing agent clients offline."""

from __future__ import annotations

import click

from campaign.benchmark import suite_of
from campaign.cli.common import core_errors
from campaign.cli.paths import InputDir
from campaign.replay import server


@click.command("replay-server")
@click.option("--task", metavar="NAME", help="Replay this task's script (default: find the task from each request's prompt).")
@click.option("--task-suite", type=InputDir(), metavar="DIR", help="The task suite its tasks come from [default: the built-in tasks].")
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to bind; anything else is refused.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port to bind; 0 picks a free one.")
@click.option("--fault", "faults", multiple=True, metavar="KIND:N|KIND:*", help="Fail the N-th model request (or every one, *): http-429, http-500, http-529, cut-stream or hang; or answer it a second late: slow (repeatable).")
def replay_server(task: str | None, task_suite, host: str, port: int, faults: tuple[str, ...]) -> None:
    """Serve scripted model replies on loopback until SIGTERM; prints 'replay listening on HOST:PORT'.

    \b
    Examples:
      campaign replay-server --port 0
      campaign replay-server --task semver-precedence --fault http-500:2
      campaign replay-server --port 8089 --fault http-529:*
    """
    with core_errors():
        server.run(task_name=task, host=host, port=port, faults=faults, suite=suite_of(task_suite))
