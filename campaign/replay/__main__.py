"""``python -m campaign.replay``: the replay provider as a process of its own.

The same options as ``campaign replay-server``, parsed here so that starting a
replay per attempt loads the replay and nothing of the CLI above it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from campaign.benchmark import suite_of
from campaign.errors import CampaignError
from campaign.replay import server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m campaign.replay", description="Serve scripted model replies on loopback until SIGTERM.")
    parser.add_argument("--task", help="replay this task's script (default: find it from each request's prompt)")
    parser.add_argument("--task-suite", type=Path, help="the suite directory its tasks come from (default: the built-in tasks)")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one")
    parser.add_argument("--listen-stdin", action="store_true", help="serve on the listening loopback socket given as stdin (instead of binding)")
    parser.add_argument("--fault", action="append", default=[], metavar="KIND:N|KIND:*", help="fail the N-th model request (or every one)")
    args = parser.parse_args(argv)
    try:
        server.run(task_name=args.task, host=args.host, port=args.port, faults=args.fault, suite=suite_of(args.task_suite), listen_stdin=args.listen_stdin)
    except CampaignError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
