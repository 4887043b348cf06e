"""`campaign profiler prepare-cache|check-cache`: exit codes and what they print."""

from __future__ import annotations

import hashlib

from campaign.cli import cli
from campaign.profiler.tokenizer import CACHE_FILE_NAME, O200K_SHA256, TIKTOKEN_CACHE_NAME


def test_prepare_then_check(runner, tmp_path):
    directory = tmp_path / "cache"
    prepared = runner.invoke(cli, ["profiler", "prepare-cache", "--cache-dir", str(directory)])
    assert prepared.exit_code == 0, prepared.output
    assert prepared.output == f"path: {directory / CACHE_FILE_NAME}\nsha256: {O200K_SHA256}\n"
    assert hashlib.sha256((directory / TIKTOKEN_CACHE_NAME).read_bytes()).hexdigest() == O200K_SHA256

    checked = runner.invoke(cli, ["profiler", "check-cache", "--cache-dir", str(directory)])
    assert checked.exit_code == 0, checked.output
    assert checked.output == prepared.output


def test_cache_dir_defaults_to_the_environment(runner, tmp_path):
    directory = tmp_path / "from-env"
    result = runner.invoke(cli, ["profiler", "prepare-cache"], env={"CAMPAIGN_TOKENIZER_CACHE": str(directory)})
    assert result.exit_code == 0, result.output
    assert (directory / CACHE_FILE_NAME).is_file()
    checked = runner.invoke(cli, ["profiler", "check-cache"], env={"CAMPAIGN_TOKENIZER_CACHE": str(directory)})
    assert checked.exit_code == 0, checked.output


def test_check_fails_with_one_line_on_a_missing_or_damaged_cache(runner, tmp_path):
    directory = tmp_path / "cache"
    missing = runner.invoke(cli, ["profiler", "check-cache", "--cache-dir", str(directory)])
    assert missing.exit_code == 1
    assert missing.output.count("\n") == 1 and "is missing" in missing.output and "campaign profiler prepare-cache" in missing.output

    assert runner.invoke(cli, ["profiler", "prepare-cache", "--cache-dir", str(directory)]).exit_code == 0
    (directory / CACHE_FILE_NAME).write_bytes(b"tampered")
    damaged = runner.invoke(cli, ["profiler", "check-cache", "--cache-dir", str(directory)])
    assert damaged.exit_code == 1
    assert damaged.output.count("\n") == 1 and "SHA-256" in damaged.output


def test_bad_from_is_a_usage_error_and_writes_nothing(runner, tmp_path):
    directory = tmp_path / "cache"
    wrong = tmp_path / "wrong.tiktoken"
    wrong.write_bytes(b"dG9rZW4= 0\n")
    for source, says in ((wrong, "SHA-256"), (tmp_path / "absent.tiktoken.gz", "does not exist")):
        result = runner.invoke(cli, ["profiler", "prepare-cache", "--cache-dir", str(directory), "--from", str(source)])
        assert result.exit_code == 2, result.output
        assert "--from" in result.output and says in result.output
    assert not directory.exists()


def test_help_is_one_line_per_command(runner):
    result = runner.invoke(cli, ["profiler", "--help"])
    assert result.exit_code == 0
    assert "prepare-cache  Seed and verify the offline tokenizer cache." in result.output
    assert "check-cache    Verify the offline tokenizer cache." in result.output
