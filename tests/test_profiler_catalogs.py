"""Catalogs handed from the proxy to the engine: written once each, counted by the engine
with the figure the proxy itself would have recorded, and trusted only as far as their digest."""

from __future__ import annotations

import json
import os

import pytest

from campaign.canonical import spec_json, text_sha256, wire_json
from campaign.profiler import catalogs
from campaign.profiler.capture import read_capture
from campaign.profiler.summary import summarize
from campaign.profiler.tokenizer import count_tokens, load_encoding, tool_schema_tokens
from test_profiler_proxy import TOOLS, body_for, post, proxy_for, upstream  # noqa: F401  (fixtures)


@pytest.fixture
def dir_fd(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def _entry(tools) -> str:
    text = wire_json(tools)
    return spec_json({"catalog_digest": text_sha256(text), "json": text})


def test_the_engine_counts_what_the_proxy_would_have_recorded(upstream, proxy_for, tokenizer_cache, tmp_path, dir_fd):  # noqa: F811
    handed = tmp_path / catalogs.CATALOGS_NAME
    proxy = proxy_for(upstream.url, "--catalogs", str(handed))
    for path in ("/v1/messages", "/v1/messages", "/v1/responses"):
        assert post(proxy.url, path, body_for(path, stream=False))[0] == 200
    assert proxy.stop() == 0

    capture = read_capture(proxy.capture)
    requests = capture.model_requests
    assert capture.flush_complete and len(requests) == 3
    # The proxy counted nothing (it built no Encoding) and wrote each catalog once.
    assert [r["schema_tokens"] for r in requests] == [None, None, None]
    lines = handed.read_text().splitlines()
    assert len(lines) == 2 and handed.stat().st_mode & 0o777 == 0o600

    encoding = load_encoding(tokenizer_cache)
    counted = catalogs.count(catalogs.read(dir_fd), lambda text: count_tokens(encoding, text))
    expected = {requests[0]["catalog_digest"]: tool_schema_tokens(encoding, TOOLS["/v1/messages"]),
                requests[2]["catalog_digest"]: tool_schema_tokens(encoding, TOOLS["/v1/responses"])}
    assert counted == expected
    diagnostics = summarize(capture, counted).diagnostics
    assert diagnostics["catalog_schema_tokens"] == expected
    assert diagnostics["visible_schema_tokens"] == max(expected.values())
    # Without the engine's count the estimates are unknown, never zero.
    assert summarize(capture).diagnostics["visible_schema_tokens"] is None


def test_a_line_is_trusted_only_as_far_as_its_digest(tmp_path, dir_fd):
    tools = TOOLS["/v1/messages"]
    forged = spec_json({"catalog_digest": text_sha256(wire_json(tools)), "json": wire_json([{"name": "x" * 5000}])})
    (tmp_path / catalogs.CATALOGS_NAME).write_text("\n".join([forged, "not json", "[1]", json.dumps({"catalog_digest": 7}), _entry(TOOLS["/v1/responses"])]) + "\n")
    assert list(catalogs.read(dir_fd)) == [text_sha256(wire_json(TOOLS["/v1/responses"]))]


@pytest.mark.parametrize("kind", ["missing", "symlink", "fifo", "too_large"])
def test_a_file_that_is_not_the_proxys_counts_nothing(tmp_path, dir_fd, kind):
    target = tmp_path / catalogs.CATALOGS_NAME
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text(_entry(TOOLS["/v1/messages"]) + "\n")
    if kind == "symlink":
        target.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "too_large":
        target.write_text(_entry(TOOLS["/v1/messages"]) + "\n")
    assert catalogs.read(dir_fd, limit=10 if kind == "too_large" else catalogs.MAX_CATALOGS_BYTES) == {}


def test_the_writer_never_reuses_a_file(tmp_path):
    path = tmp_path / catalogs.CATALOGS_NAME
    path.write_text("")
    with pytest.raises(FileExistsError):
        catalogs.CatalogWriter(path)
    writer = catalogs.CatalogWriter(tmp_path / "fresh.jsonl")
    text = wire_json(["any JSON text"])
    writer.write(text_sha256(text), text)
    writer.write(text_sha256(text), text)
    writer.close()
    assert len((tmp_path / "fresh.jsonl").read_text().splitlines()) == 1
