"""Sample stores checked in as SQL dumps (tests/samples/stores/*/store.sql): restored into
a file and brought to head with `campaign db upgrade`, as an operator upgrades one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from campaign.cli import cli


def restore_store(dump: Path, directory: Path, name: str = "before.db") -> str:
    db = directory / name
    with sqlite3.connect(db) as conn:
        conn.executescript(dump.read_text(encoding="utf-8"))
    upgraded = CliRunner().invoke(cli, ["db", "upgrade", "--db", str(db)])
    assert upgraded.exit_code == 0, upgraded.output
    return str(db)
