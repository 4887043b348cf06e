"""Tool-schema token counts remembered by catalog digest (campaign/profiler/schema_tokens.py)."""

from __future__ import annotations

import os

import pytest

from campaign.canonical import text_sha256, wire_json
from campaign.profiler import tokenizer
from campaign.profiler.schema_tokens import MEMO_DIR, SchemaTokens

TOOLS = [{"name": "read_file", "description": "Read a file. Größe ≤ 1 MiB", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
DIGEST = text_sha256(wire_json(TOOLS))


@pytest.fixture(scope="module")
def ranks(tokenizer_cache):
    return tokenizer.verified_ranks(tokenizer_cache)


@pytest.fixture(scope="module")
def encoding(tokenizer_cache):
    return tokenizer.load_encoding(tokenizer_cache)


@pytest.fixture(scope="module")
def truth(encoding):
    return tokenizer.tool_schema_tokens(encoding, TOOLS)


@pytest.fixture
def memo(tmp_path, ranks, encoding):
    """A SchemaTokens over tmp_path that counts with the module's Encoding (building one
    costs about a second) and records each build it asks for."""
    calls: list[bytes] = []

    def build(data: bytes):
        calls.append(data)
        return encoding

    made = SchemaTokens(tmp_path, ranks, build=build)
    made.builds = calls  # type: ignore[attr-defined]
    return made


def never(_: bytes):
    raise AssertionError("built an Encoding for a catalog already counted")


def test_a_catalog_is_counted_once_then_read_back_without_a_tokenizer(tmp_path, ranks, truth, memo):
    assert memo.count(DIGEST, TOOLS) == truth and memo.count(DIGEST, TOOLS) == truth
    assert memo.builds == [ranks]  # one Encoding per process, from the verified ranks
    entry = tmp_path / MEMO_DIR / DIGEST
    assert entry.read_text() == str(truth) and oct(os.stat(tmp_path / MEMO_DIR).st_mode & 0o777) == "0o700"
    # The next proxy (another process) reads the count and builds nothing.
    assert SchemaTokens(tmp_path, ranks, build=never).count(DIGEST, TOOLS) == truth


@pytest.mark.parametrize("content", [b"", b"12x", b"-5", b"9" * 40])
def test_an_entry_that_is_no_count_is_counted_again_and_rewritten(tmp_path, truth, memo, content):
    (tmp_path / MEMO_DIR).mkdir(mode=0o700)
    (tmp_path / MEMO_DIR / DIGEST).write_bytes(content)
    assert memo.count(DIGEST, TOOLS) == truth and len(memo.builds) == 1
    assert (tmp_path / MEMO_DIR / DIGEST).read_text() == str(truth)


def test_a_symlinked_entry_is_not_followed(tmp_path, truth, memo):
    (tmp_path / MEMO_DIR).mkdir(mode=0o700)
    planted = tmp_path / "planted"
    planted.write_text("1")
    (tmp_path / MEMO_DIR / DIGEST).symlink_to(planted)
    assert memo.count(DIGEST, TOOLS) == truth
    assert planted.read_text() == "1" and not (tmp_path / MEMO_DIR / DIGEST).is_symlink()


def test_a_digest_that_is_no_sha256_is_counted_and_never_a_file_name(tmp_path, truth, memo):
    assert memo.count("../../escape", TOOLS) == truth
    assert sorted(p.name for p in tmp_path.rglob("*")) == []


def test_a_cache_it_cannot_write_to_only_costs_the_time(tmp_path, truth, memo):
    (tmp_path / MEMO_DIR).write_text("a file where the directory would be")
    assert memo.count(DIGEST, TOOLS) == truth and memo.count(DIGEST, TOOLS) == truth
