"""The wire fingerprint: one digest per part a treatment can change, stable across attempts."""

from __future__ import annotations

import json
import re

import pytest

from campaign.profiler import fingerprint
from campaign.profiler.capture import Capture
from campaign.profiler.proxy import model_record
from campaign.profiler.summary import summarize
from campaign.profiler.wire import CATALOG_DIGEST_KEYS, summarize_request

ROOT = "/tmp/campaign-paired-runtime-29f18968b696"
TOOLS = [{"name": "read", "input_schema": {"type": "object"}}]


def anthropic(**over) -> dict:
    body = {
        "model": "claude-x",
        "max_tokens": 32000,
        "tools": TOOLS,
        "system": [
            # Claude Code's billing header: a hash of the conversation, not of the prompt.
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197.9d3; cc_entrypoint=sdk-cli;"},
            {"type": "text", "text": f"You are an agent.\n - Primary working directory: {ROOT}/work\n"},
        ],
        "messages": [{"role": "user", "content": "Today's date is 2026-12-07. Fix the bug."}],
    }
    return {**body, **over}


def parts(path: str, body: dict, roots: tuple[str, ...] = (ROOT,)) -> dict[str, str]:
    summary = summarize_request(path, json.dumps(body).encode(), None, roots)
    assert summary is not None and summary.fingerprint is not None
    return dict(summary.fingerprint)


def differing(a: dict, b: dict) -> list[str]:
    return [p for p in fingerprint.PARTS if a[p] != b[p]]


def test_what_is_not_the_treatment_leaves_the_fingerprint_alone():
    first = parts("/v1/messages", anthropic())
    other_root = "/tmp/campaign-paired-runtime-0123456789ab"
    second = anthropic(system=[
        {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197.be7; cc_entrypoint=sdk-cli;"},
        {"type": "text", "text": f"You are an agent.\n - Primary working directory: {other_root}/work\n"},
    ], messages=[{"role": "user", "content": "another task entirely"}])  # fmt: skip
    assert parts("/v1/messages", second, (other_root,)) == first
    # Nothing raw leaves: every part is a SHA-256.
    assert set(first) == set(fingerprint.PARTS) and all(re.fullmatch(r"[0-9a-f]{64}", d) for d in first.values())


@pytest.mark.parametrize(
    ("change", "part"),
    [
        ({"tools": TOOLS + [{"name": "write", "input_schema": {"type": "object"}}]}, "tools"),
        ({"system": "You are a terse agent."}, "system"),
        ({"model": "claude-y"}, "model"),
        ({"thinking": {"type": "enabled", "budget_tokens": 8000}}, "reasoning"),
        ({"output_config": {"effort": "low"}}, "reasoning"),
        ({"temperature": 0.2}, "sampling"),
        ({"top_p": 0.9}, "sampling"),
        ({"max_tokens": 1024}, "max_tokens"),
    ],
)
def test_each_treatment_moves_its_own_part_and_no_other(change, part):
    assert differing(parts("/v1/messages", anthropic()), parts("/v1/messages", anthropic(**change))) == [part]


def test_the_same_setting_spelled_twice_is_one_setting_and_not_sending_it_is_a_setting():
    assert parts("/v1/messages", anthropic(temperature=1)) == parts("/v1/messages", anthropic(temperature=1.0))
    assert parts("/v1/messages", anthropic(temperature=1)) != parts("/v1/messages", anthropic())


def test_a_date_written_into_the_prompt_is_not_the_prompt():
    dated = [f"Today's date: {d}" for d in ("Mon Dec 07 2026", "Tue Dec 08 2026", "2026-12-07", "December 8, 2026")]
    digests = {parts("/v1/messages", anthropic(system=text))["system"] for text in dated}
    assert len(digests) == 1 and digests != {parts("/v1/messages", anthropic(system="Today's date: unknown"))["system"]}


def test_responses_take_instructions_and_developer_items_never_their_ids():
    def body(msg_id: str, developer: str = "Use the tools.") -> dict:
        return {
            "model": "gpt-x", "tools": TOOLS, "reasoning": {"effort": "high"}, "instructions": "You are Codex.",
            "input": [
                {"type": "message", "role": "developer", "id": msg_id, "content": [{"type": "input_text", "text": developer}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"<cwd>{ROOT}/work</cwd> task"}]},
            ],
        }  # fmt: skip

    assert parts("/v1/responses", body("msg_1")) == parts("/v1/responses", body("msg_2"))
    assert differing(parts("/v1/responses", body("msg_1")), parts("/v1/responses", body("msg_1", "Use no tools."))) == ["system"]
    assert differing(parts("/v1/responses", body("msg_1")), parts("/v1/responses", {**body("msg_1"), "max_output_tokens": 10})) == ["max_tokens"]


def test_chat_and_gemini_read_their_own_system_and_settings():
    chat = {"model": "m", "tools": TOOLS, "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]}
    assert differing(parts("/v1/chat/completions", chat), parts("/v1/chat/completions", {**chat, "messages": [{"role": "system", "content": "Be thorough."}, chat["messages"][1]]})) == ["system"]
    assert differing(parts("/v1/chat/completions", chat), parts("/v1/chat/completions", {**chat, "max_completion_tokens": 5})) == ["max_tokens"]
    gemini = {"tools": [{"functionDeclarations": TOOLS}], "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]}, "generationConfig": {"temperature": 1, "topK": 64}}
    path = "/v1beta/models/gemini-x:streamGenerateContent"
    assert differing(parts(path, gemini), parts(path, {**gemini, "generationConfig": {"temperature": 1, "topK": 32}})) == ["sampling"]
    assert differing(parts(path, gemini), parts(path, {**gemini, "systemInstruction": {"parts": [{"text": "You are terse."}]}})) == ["system"]
    assert differing(parts(path, gemini), parts("/v1beta/models/gemini-y:streamGenerateContent", gemini)) == ["model"]


def test_an_unreadable_body_has_no_fingerprint():
    summary = summarize_request("/v1/messages", b"{not json")
    assert summary is not None and summary.fingerprint is None and summary.fingerprint_digest is None


def test_the_attempt_lists_the_fingerprints_of_its_catalog_requests():
    bodies = [anthropic(), anthropic(messages=[{"role": "user", "content": "turn 2"}]), anthropic(system="A subagent.")]
    records = [model_record(i, summarize_request("/v1/messages", json.dumps(b).encode(), None, (ROOT,)), None, 200, None) for i, b in enumerate(bodies, 1)]
    diagnostics = summarize(Capture(records=tuple(records), flush_complete=True)).diagnostics
    digests = diagnostics[CATALOG_DIGEST_KEYS[3]]
    assert len(digests) == 2 and set(diagnostics["fingerprints"]) == set(digests)
    assert all(fingerprint.digest(diagnostics["fingerprints"][d]) == d for d in digests)
    per_part = fingerprint.variant_parts(diagnostics["fingerprints"])
    assert [p for p in fingerprint.PARTS if len(per_part[p]) > 1] == ["system"]


def test_two_variants_differ_in_the_parts_whose_digests_differ():
    base = fingerprint.variant_parts({"x": parts("/v1/messages", anthropic())})
    lean = fingerprint.variant_parts({"y": parts("/v1/messages", anthropic(system="Be terse.", max_tokens=5))})
    assert fingerprint.differing_parts(base, lean) == ["system", "max_tokens"] and fingerprint.differing_parts(base, base) == []
