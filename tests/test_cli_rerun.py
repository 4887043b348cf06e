"""The printed next step (`campaign.cli.rerun`): this very command, never a credential in it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sqlalchemy.engine import make_url

from campaign.cli.rerun import shown

CANARY = "pw-canary-0123456789"


@pytest.mark.parametrize(
    ("arg", "printed"),
    [
        ("postgresql+psycopg://campaign:secret@127.0.0.1:5432/db", "postgresql+psycopg://campaign:***@127.0.0.1:5432/db"),
        ("--db=postgresql://u:p%40ss@h/d", "--db=postgresql://u:***@h/d"),
        ("postgresql://u:pa@ss@h:5/d?x=1", "postgresql://u:***@h:5/d?x=1"),  # an unencoded "@": up to the last one
        ("postgresql://u@h/d", "postgresql://u@h/d"),
        ("/tmp/store.db", "/tmp/store.db"),
        ("https://example.com/path", "https://example.com/path"),
    ],
)
def test_a_urls_password_is_never_shown(arg, printed):
    assert shown(arg) == printed


def test_the_lines_after_a_stop_on_postgresql_hide_the_stores_password(postgres_url, tmp_path):
    url = make_url(postgres_url).set(password=CANARY).render_as_string(hide_password=False)
    base = [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", "offline", "--tasks", "semver-precedence", "--repetitions", "1", "--live"]
    env = {**os.environ, "TMPDIR": str(tmp_path), "CAMPAIGN_TEST_STOP_AT": "between:1:INT"}
    stopped = subprocess.run([*base, "--output-dir", str(tmp_path / "out"), "--db", url], env=env, capture_output=True, text=True, timeout=300)
    assert stopped.returncode == 130, stopped.stderr
    assert "to continue, run:" in stopped.stderr and ":***@" in stopped.stderr
    env.pop("CAMPAIGN_TEST_STOP_AT")
    elsewhere = subprocess.run([*base, "--output-dir", str(tmp_path / "other"), "--db", url], env=env, capture_output=True, text=True, timeout=300)
    assert elsewhere.returncode == 2 and "--resume" in elsewhere.stderr and ":***@" in elsewhere.stderr, elsewhere.stderr
    for done in (stopped, elsewhere):
        assert CANARY not in done.stdout + done.stderr
