"""The real agent clients the end-to-end tests drive: where they are, and a guard.

They are installed by scripts/install_clients.sh at the versions in
clients/versions.env, found on ``$CAMPAIGN_CLIENTS_PATH`` (scripts/test.sh sets
it) or in ``.clients/``. CI sets ``CAMPAIGN_REQUIRE_CLIENTS=1`` so a missing
client fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# --agent -> the executable it runs
EXECUTABLES = {"claude-code": "claude", "codex": "codex", "mini-swe-agent": "mini", "opencode": "opencode", "gemini": "gemini"}


def clients_path() -> str:
    configured = os.environ.get("CAMPAIGN_CLIENTS_PATH")
    if configured:
        return configured
    local = REPO / ".clients"
    return os.pathsep.join(str(p) for p in (local / "npm" / "node_modules" / ".bin", local / "mini" / "bin"))


def env_with_clients(cache: Path) -> dict[str, str]:
    return {**os.environ, "PATH": clients_path() + os.pathsep + os.environ.get("PATH", ""), "CAMPAIGN_TOKENIZER_CACHE": str(cache)}


def require(agent: str, env: dict[str, str]) -> None:
    if shutil.which(EXECUTABLES[agent], path=env["PATH"]) is None:
        if os.environ.get("CAMPAIGN_REQUIRE_CLIENTS"):
            pytest.fail(f"{agent} is not installed; scripts/install_clients.sh installs it")
        pytest.skip(f"{agent} is not installed (run scripts/install_clients.sh)")


def rows(db: Path, sql: str) -> list[dict]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(sql)]
