"""`campaign plan extract|digest` against the spec's own Python snippets, run for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from campaign.cli import cli
from campaign.canonical import spec_digest

# The spec's snippets, verbatim ("Plan-only preparation" and "Explicit bounded live authorization").
SPEC_EXTRACT = """\
import json
import sys
from pathlib import Path
wrapper = json.loads(Path(sys.argv[1]).read_text())
Path(sys.argv[2]).write_text(json.dumps(wrapper['plan'], indent=2) + '\\n')
"""
SPEC_DIGEST = """\
import hashlib
import json
import sys
from pathlib import Path
plan = json.loads(Path(sys.argv[1]).read_text())
canonical = json.dumps(plan, sort_keys=True, separators=(',', ':'), allow_nan=False)
print(hashlib.sha256(canonical.encode('utf-8')).hexdigest())
"""

NON_ASCII_PLAN = {
    "approved": True,
    "experiment": {
        "tasks": ["slug-ünïcode", "日本語のタスク", "emoji-🙂", "tab\tand\u2028separator", 'quote"back\\slash'],
        "model": "zai:glm-5",
        "seed": 107,
        "ratio": 0.1,
        "big": 12345678901234567890,
        "nothing": None,
    },
    "max_attempts": 96,
    "max_spend_usd": 25.5,
    "per_attempt_spend_ceiling_usd": 1.25,
    "provider_budget_enforced": True,
    "credential_env": ["ZAI_API_KEY"],
}


def spec(snippet: str, *args: Path) -> subprocess.CompletedProcess[str]:
    """Run a spec snippet as the operator would: python3 - ARGS <<'PY' ... PY."""
    return subprocess.run(
        [sys.executable, "-", *map(str, args)],
        input=snippet,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
        check=True,
    )


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("indent", [None, 2, "\t"])
def test_digest_equals_the_spec_snippet_on_non_ascii_plans(tmp_path: Path, indent):
    path = tmp_path / "operator-plan.json"
    path.write_text(json.dumps(NON_ASCII_PLAN, indent=indent, ensure_ascii=False), encoding="utf-8")
    ours = invoke("plan", "digest", str(path))
    assert ours.exit_code == 0, ours.output
    assert ours.output == spec(SPEC_DIGEST, path).stdout
    assert len(ours.output.strip()) == 64 and ours.output.strip() == ours.output.strip().lower()


def test_digest_ignores_whitespace_and_key_order(tmp_path: Path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(NON_ASCII_PLAN))
    b.write_text(json.dumps(dict(reversed(list(NON_ASCII_PLAN.items()))), indent=4, ensure_ascii=True))
    assert invoke("plan", "digest", str(a)).output == invoke("plan", "digest", str(b)).output


def test_extract_then_digest_round_trip_against_the_spec(tmp_path: Path):
    template = tmp_path / "paired-plan-template.json"
    plan = dict(NON_ASCII_PLAN, approved=False)
    template.write_text(
        json.dumps({"schema_version": 3, "kind": "paired_disclosure_plan", "plan": plan, "plan_digest": spec_digest(plan)}, indent=2)
    )
    ours, theirs = tmp_path / "ours.json", tmp_path / "theirs.json"
    result = invoke("plan", "extract", str(template), str(ours))
    assert result.exit_code == 0, result.output
    spec(SPEC_EXTRACT, template, theirs)
    assert ours.read_bytes() == theirs.read_bytes()
    digest = invoke("plan", "digest", str(ours)).output.strip()
    assert digest == spec(SPEC_DIGEST, theirs).stdout.strip() == spec_digest(plan)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"max_spend_usd": NaN}', "NaN"),
        ('{"max_spend_usd": Infinity}', "Infinity"),
        ('{"max_spend_usd": -Infinity}', "-Infinity"),
        ('{"max_spend_usd": 1e999}', "too large"),
        ("[]", "JSON array, not an object"),
        ('"plan"', "JSON string, not an object"),
        ("42", "JSON number, not an object"),
        ("null", "JSON null, not an object"),
        ("{", "not valid JSON"),
        ('{"approved": true, "approved": false}', "appears twice"),
        # Parsed, then walked by the digest: both recurse (a traceback at ~500 levels).
        ('{"a":' * 600 + "1" + "}" * 600, "nests deeper than 64 levels"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "nests deeper than 64 levels"),
    ],
    ids=lambda value: value[:40],
)
def test_digest_refuses_what_has_no_canonical_form(tmp_path: Path, text: str, needle: str):
    path = tmp_path / "plan.json"
    path.write_text(text)
    result = invoke("plan", "digest", str(path))
    assert result.exit_code == 2
    assert needle in result.output
    assert "Traceback" not in result.output


def test_spec_snippet_also_refuses_nan(tmp_path: Path):
    path = tmp_path / "plan.json"
    path.write_text('{"max_spend_usd": NaN}')
    with pytest.raises(subprocess.CalledProcessError):
        spec(SPEC_DIGEST, path)


def test_digest_refuses_the_template_wrapper(tmp_path: Path):
    path = tmp_path / "template.json"
    path.write_text(json.dumps({"schema_version": 3, "kind": "paired_disclosure_plan", "plan": {}}))
    result = invoke("plan", "digest", str(path))
    assert result.exit_code == 2 and "campaign plan extract" in result.output


def test_digest_of_a_missing_file(tmp_path: Path):
    result = invoke("plan", "digest", str(tmp_path / "nope.json"))
    assert result.exit_code == 2 and "does not exist" in result.output


def test_extract_refuses_a_plain_plan(tmp_path: Path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(NON_ASCII_PLAN))
    result = invoke("plan", "extract", str(plan), str(tmp_path / "out.json"))
    assert result.exit_code == 2 and "not a paired_disclosure_plan template" in result.output
    assert not (tmp_path / "out.json").exists()


def test_a_real_template_extracts_and_digests_like_the_spec(tmp_path: Path):
    source = tmp_path / "checkout"
    source.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q"], cwd=source, check=True, env=env)
    (source / "main.py").write_text("print('ünïcode')\n")
    config = tmp_path / "base.toml"
    config.write_text("title = 'base ünïcode'\n")
    template = tmp_path / "out" / "template.json"
    made = invoke(
        "coding", "--paired", "--source", str(source), "--config", str(config), "--output", str(template),
        "--repetitions", "1", "--db", str(tmp_path / "campaign.db"),
    )
    assert made.exit_code == 0, made.output
    ours, theirs = tmp_path / "ours.json", tmp_path / "theirs.json"
    assert invoke("plan", "extract", str(template), str(ours)).exit_code == 0
    spec(SPEC_EXTRACT, template, theirs)
    assert ours.read_bytes() == theirs.read_bytes()
    digest = invoke("plan", "digest", str(ours)).output.strip()
    assert digest == spec(SPEC_DIGEST, theirs).stdout.strip() == json.loads(template.read_text())["plan_digest"]
