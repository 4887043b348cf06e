"""How the suite is spread over pytest-xdist workers (``-n N``; see tests/conftest.py).

Each test is its own unit of work, so the heaviest files (a real client's campaign
takes a minute) spread over every worker instead of queueing on one, except the files
named in ``ONE_WORKER``, whose tests go together to one worker. Units are handed out
in collection order, which conftest sorts heaviest file first; xdist puts a unit of
several tests (a ``ONE_WORKER`` group) ahead of single tests.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

# File -> its group. Kill windows and escape chains time kills to the millisecond: two
# of them must not run at once and race each other for the CPU. The others share a
# module fixture that builds whole campaigns or stores, built once on one worker
# instead of once on each.
ONE_WORKER = {
    "tests/test_campaign_kill_windows.py": "kill-timing",
    "tests/test_supervise_escape.py": "kill-timing",
    "tests/test_store_chain_pinned.py": "tests/test_store_chain_pinned.py",
    "tests/test_store_chain_ends.py": "tests/test_store_chain_ends.py",
    "tests/test_cli_main.py": "tests/test_cli_main.py",
    "tests/test_benchmark.py": "tests/test_benchmark.py",
}


class ByTestOrGroup(LoadScopeScheduling):
    """xdist's scope scheduling with a scope of one test, or of its ``ONE_WORKER`` group."""

    def _split_scope(self, nodeid: str) -> str:
        return ONE_WORKER.get(nodeid.split("::", 1)[0], nodeid)
