"""The replay server's three wire formats, checked with the official SDKs as parsers
and against the exact SSE event order each provider uses."""

from __future__ import annotations

import http.client
import json
import re
import time
import urllib.error
import urllib.request

import anthropic
import openai
import pytest

from campaign import benchmark
from campaign.errors import UsageProblem
from campaign.replay import build_app, running_in_thread, script_for
from campaign.replay.faults import SLOW_S
from campaign.replay.steps import usage_for_step

TASK = benchmark.get_task("unit-table-regen")
CWD = "/srv/work"
STR = {"type": "string"}
BASH_SCHEMA = {"type": "object", "properties": {"command": STR, "description": STR}, "required": ["command"]}
SHELL_SCHEMA = {"type": "object", "properties": {"command": {"type": "array", "items": STR}, "workdir": STR}, "required": ["command"]}
ANTHROPIC_TOOLS = [
    {"name": "Read", "description": "Reads a file", "input_schema": {"type": "object", "properties": {"file_path": STR}, "required": ["file_path"]}},
    {"name": "Bash", "description": "Runs bash", "input_schema": BASH_SCHEMA},
]
CHAT_TOOLS = [{"type": "function", "function": {"name": "bash", "description": "Execute a bash command", "parameters": BASH_SCHEMA}}]
RESPONSES_TOOLS = [
    {"type": "function", "name": "shell", "description": "Runs a shell command", "parameters": SHELL_SCHEMA, "strict": False},
    {"type": "custom", "name": "apply_patch", "description": "Apply a patch", "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}},
    {"type": "web_search"},
]
FIRST = usage_for_step(0)
LAST = usage_for_step(len(script_for(TASK.name)) - 1)


@pytest.fixture(scope="module")
def server():
    with running_in_thread(build_app()) as running:
        yield running


@pytest.fixture
def claude(server):
    return anthropic.Anthropic(base_url=server.base_url, api_key="dummy", max_retries=0)


@pytest.fixture
def oai(server):
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="dummy", max_retries=0)


def _post(server, path: str, body: dict) -> tuple[int, bytes]:
    request = urllib.request.Request(server.base_url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _events(raw: bytes) -> list[tuple[str | None, object]]:
    """(event name, decoded data) per SSE frame."""
    frames = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        event = re.search(r"^event: (.*)$", block, re.M)
        data = re.search(r"^data: (.*)$", block, re.M).group(1)
        frames.append((event.group(1) if event else None, data if data == "[DONE]" else json.loads(data)))
    return frames


def _anthropic_body(history: list[dict] | None = None, **extra) -> dict:
    messages = [{"role": "user", "content": TASK.prompt}, *(history or [])]
    return {"model": "claude-replay", "max_tokens": 1024, "system": f"Working directory: {CWD}", "messages": messages, "tools": ANTHROPIC_TOOLS, **extra}


def _final_anthropic_history() -> list[dict]:
    """A history with every scripted turn already taken, so the next reply is the final answer."""
    history = []
    for n in range(len(script_for(TASK.name)) - 1):
        history.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": "true"}}]})
        history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok"}]})
    return history


# --- Anthropic Messages ----------------------------------------------------------


def test_anthropic_non_stream_tool_use_and_usage(claude):
    message = claude.messages.create(**_anthropic_body())
    assert message.id.startswith("msg_") and message.stop_reason == "tool_use"
    (tool,) = [b for b in message.content if b.type == "tool_use"]
    assert (tool.name, tool.input) == ("Read", {"file_path": f"{CWD}/unitconv/__init__.py"})
    u = message.usage
    assert (u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, u.output_tokens) == (
        FIRST.uncached_input, FIRST.cached_input, FIRST.cache_write, FIRST.output)


def test_anthropic_stream_accumulates_to_the_same_message(claude):
    history = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_0", "name": "Read", "input": {"file_path": "x"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": "source"}]},
    ]
    with claude.messages.stream(**_anthropic_body(history)) as stream:
        message = stream.get_final_message()
    (tool,) = [b for b in message.content if b.type == "tool_use"]
    assert tool.name == "Bash" and tool.input["command"].startswith(f"cd {CWD} && python3 -c ")
    second = usage_for_step(1)
    assert message.usage.output_tokens == second.output and message.usage.input_tokens == second.uncached_input
    assert message.usage.cache_read_input_tokens == second.cached_input and message.stop_reason == "tool_use"


def test_anthropic_final_answer_streamed_ends_the_turn(claude):
    events = list(claude.messages.create(**_anthropic_body(_final_anthropic_history()), stream=True))
    assert events[-2].type == "message_delta" and events[-2].delta.stop_reason == "end_turn"
    assert events[-2].usage.output_tokens == LAST.output
    assert "".join(e.delta.text for e in events if e.type == "content_block_delta").startswith("Done: ")


def test_anthropic_sse_event_order(server):
    status, raw = _post(server, "/v1/messages", _anthropic_body(stream=True))
    assert status == 200
    frames = _events(raw)
    names = [name for name, _ in frames]
    assert all(name == data["type"] for name, data in frames)
    text_deltas = names.count("content_block_delta") - sum(1 for _, d in frames if d["type"] == "content_block_delta" and d["delta"]["type"] == "input_json_delta")
    json_deltas = names.count("content_block_delta") - text_deltas
    assert names == [
        "message_start",
        "content_block_start", *["content_block_delta"] * text_deltas, "content_block_stop",
        "content_block_start", *["content_block_delta"] * json_deltas, "content_block_stop",
        "message_delta", "message_stop",
    ]
    start = frames[0][1]["message"]
    assert start["usage"] == {"input_tokens": FIRST.uncached_input, "cache_read_input_tokens": FIRST.cached_input,
                              "cache_creation_input_tokens": FIRST.cache_write, "output_tokens": 1}
    assert frames[-2][1]["usage"] == {"output_tokens": FIRST.output} and frames[-2][1]["delta"]["stop_reason"] == "tool_use"
    partial = "".join(d["delta"]["partial_json"] for _, d in frames if d["type"] == "content_block_delta" and d["delta"]["type"] == "input_json_delta")
    assert json.loads(partial) == {"file_path": f"{CWD}/unitconv/__init__.py"} and json_deltas > 1


def test_anthropic_count_tokens_models_and_probes(claude, server):
    counted = claude.messages.count_tokens(model="claude-replay", messages=[{"role": "user", "content": "hello"}])
    assert counted.input_tokens > 0
    assert [m.id for m in claude.models.list()]
    for method in ("HEAD", "GET"):
        with urllib.request.urlopen(urllib.request.Request(server.base_url + "/", method=method), timeout=10) as response:
            assert response.status == 200


# --- OpenAI Chat Completions -----------------------------------------------------


def _chat_messages() -> list[dict]:
    return [{"role": "system", "content": "You are a helpful agent."}, {"role": "user", "content": TASK.prompt}]


def test_chat_non_stream_tool_calls_and_usage(oai):
    completion = oai.chat.completions.create(model="gpt-replay", messages=_chat_messages(), tools=CHAT_TOOLS)
    assert completion.id.startswith("chatcmpl-") and completion.object == "chat.completion"
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.id.startswith("call_") and call.function.name == "bash"
    assert json.loads(call.function.arguments) == {"command": "cat unitconv/__init__.py", "description": "Let me look at unitconv/__init__.py."}
    u = completion.usage
    assert u.prompt_tokens == FIRST.prompt_total and u.prompt_tokens_details.cached_tokens == FIRST.cached_input
    assert u.completion_tokens == FIRST.output and u.total_tokens == FIRST.prompt_total + FIRST.output


def test_chat_stream_with_include_usage(oai):
    chunks = list(oai.chat.completions.create(model="gpt-replay", messages=_chat_messages(), tools=CHAT_TOOLS, stream=True, stream_options={"include_usage": True}))
    assert all(c.object == "chat.completion.chunk" for c in chunks) and len({c.id for c in chunks}) == 1
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens == FIRST.prompt_total
    assert chunks[-1].usage.prompt_tokens_details.cached_tokens == FIRST.cached_input and chunks[-1].usage.completion_tokens == FIRST.output
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-2].choices[0].finish_reason == "tool_calls"
    arguments = "".join(tc.function.arguments or "" for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or [])
    assert json.loads(arguments)["command"] == "cat unitconv/__init__.py"


def test_chat_stream_without_include_usage_has_no_usage_chunk(server):
    status, raw = _post(server, "/chat/completions", {"model": "m", "messages": _chat_messages(), "tools": CHAT_TOOLS, "stream": True})
    frames = _events(raw)
    assert status == 200 and all(name is None for name, _ in frames)
    assert frames[-1][1] == "[DONE]"
    chunks = [d for _, d in frames[:-1]]
    assert all(c["choices"] and "usage" not in c for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert [c["choices"][0]["finish_reason"] for c in chunks].count("tool_calls") == 1 and chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


# --- OpenAI Responses ------------------------------------------------------------


def _responses_input() -> list[dict]:
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"<environment_context><cwd>{CWD}</cwd></environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": TASK.prompt}]},
    ]


def test_responses_non_stream_function_call_and_usage(oai):
    response = oai.responses.create(model="gpt-replay", input=_responses_input(), tools=RESPONSES_TOOLS)
    assert response.id.startswith("resp_") and response.status == "completed"
    (call,) = [item for item in response.output if item.type == "function_call"]
    assert call.id.startswith("fc_") and call.call_id.startswith("call_") and call.name == "shell"
    assert json.loads(call.arguments) == {"command": ["bash", "-lc", f"cat {CWD}/unitconv/__init__.py"], "workdir": CWD}
    u = response.usage
    assert (u.input_tokens, u.input_tokens_details.cached_tokens, u.output_tokens, u.output_tokens_details.reasoning_tokens, u.total_tokens) == (
        FIRST.prompt_total, FIRST.cached_input, FIRST.output, 0, FIRST.prompt_total + FIRST.output)


def test_responses_stream_accumulates(oai):
    with oai.responses.stream(model="gpt-replay", input=_responses_input(), tools=RESPONSES_TOOLS) as stream:
        numbers = [event.sequence_number for event in stream]
        final = stream.get_final_response()
    assert numbers == list(range(len(numbers)))
    (call,) = [item for item in final.output if item.type == "function_call"]
    assert json.loads(call.arguments)["workdir"] == CWD and final.usage.output_tokens == FIRST.output


def test_responses_sse_event_order(server):
    status, raw = _post(server, "/v1/responses", {"model": "m", "input": _responses_input(), "tools": RESPONSES_TOOLS, "stream": True})
    frames = _events(raw)
    assert status == 200 and all(name == data["type"] for name, data in frames)
    assert [d["sequence_number"] for _, d in frames] == list(range(len(frames)))
    names = [name for name, _ in frames]
    text = names.count("response.output_text.delta")
    args = names.count("response.function_call_arguments.delta")
    assert names == [
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added", *["response.output_text.delta"] * text,
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", *["response.function_call_arguments.delta"] * args,
        "response.function_call_arguments.done", "response.output_item.done",
        "response.completed",
    ]
    assert frames[0][1]["response"]["status"] == "in_progress"
    completed = frames[-1][1]["response"]
    assert completed["usage"]["input_tokens"] == FIRST.prompt_total and completed["output"][1]["type"] == "function_call"


def test_responses_final_answer_is_a_message_only(oai):
    history = _responses_input()
    for n in range(len(script_for(TASK.name)) - 1):
        history += [{"type": "function_call", "call_id": f"c{n}", "name": "shell", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": f"c{n}", "output": "ok"}]
    response = oai.responses.create(model="gpt-replay", input=history, tools=RESPONSES_TOOLS)
    assert [item.type for item in response.output] == ["message"] and response.output_text.startswith("Done: ")
    assert response.usage.output_tokens == LAST.output


# --- statelessness, ids, faults --------------------------------------------------


def test_a_retried_request_gets_the_same_step_and_a_new_id(claude):
    first, second = (claude.messages.create(**_anthropic_body()) for _ in range(2))
    assert first.id != second.id
    assert first.content[-1].id != second.content[-1].id
    assert first.content[-1].input == second.content[-1].input


def test_past_the_last_step_keeps_finishing(claude):
    history = _final_anthropic_history() * 2
    message = claude.messages.create(**_anthropic_body(history))
    assert message.stop_reason == "end_turn" and message.usage.output_tokens == LAST.output


def test_bad_json_body_is_a_400_in_the_format_error_shape(server):
    request = urllib.request.Request(server.base_url + "/v1/messages", data=b"{nope", headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400 and json.loads(caught.value.read())["type"] == "error"


def test_faults_hit_the_numbered_requests_only():
    faults = ["http-500:1", "http-500:2", "http-500:3", "cut-stream:4", "cut-stream:5", "cut-stream:6"]
    with running_in_thread(build_app(TASK.name, faults=faults)) as running:
        claude = anthropic.Anthropic(base_url=running.base_url, api_key="dummy", max_retries=0)
        oai = openai.OpenAI(base_url=f"{running.base_url}/v1", api_key="dummy", max_retries=0)
        with pytest.raises(anthropic.InternalServerError) as a500:
            claude.messages.create(**_anthropic_body())
        assert a500.value.body["error"]["type"] == "api_error"
        with pytest.raises(openai.InternalServerError) as c500:
            oai.chat.completions.create(model="m", messages=_chat_messages())
        assert c500.value.body["type"] == "server_error"
        with pytest.raises(openai.InternalServerError):
            oai.responses.create(model="m", input="hi")
        # Cut streams: the start event arrives, then the connection drops without terminal events.
        seen = []
        with pytest.raises(Exception) as cut:
            for event in claude.messages.create(**_anthropic_body(), stream=True):
                seen.append(event.type)
        assert seen == ["message_start"] and not isinstance(cut.value, anthropic.APIStatusError)
        with pytest.raises(openai.APIConnectionError):
            list(oai.chat.completions.create(model="m", messages=_chat_messages(), stream=True))
        with pytest.raises(openai.APIConnectionError):
            list(oai.responses.create(model="m", input="hi", stream=True))
        # Request 7 has no fault: the client's retry succeeds.
        assert claude.messages.create(**_anthropic_body()).stop_reason == "tool_use"


def test_a_bad_day_for_every_request_and_a_request_that_hangs():
    with running_in_thread(build_app(TASK.name, faults=["http-529:*", "http-429:2", "hang:3"])) as running:
        claude = anthropic.Anthropic(base_url=running.base_url, api_key="dummy", max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            claude.messages.create(**_anthropic_body())
        assert overloaded.value.status_code == 529 and overloaded.value.body["error"]["type"] == "overloaded_error"
        with pytest.raises(anthropic.RateLimitError) as limited:
            claude.messages.create(**_anthropic_body())
        assert limited.value.response.headers["retry-after"] == "1"
        # Request 3 is read and never answered: the client's own timeout is all that ends it.
        with pytest.raises(anthropic.APITimeoutError):
            claude.with_options(timeout=1.0).messages.create(**_anthropic_body())
        with pytest.raises(anthropic.APIStatusError) as again:  # every other request: 529
            claude.messages.create(**_anthropic_body())
        assert again.value.status_code == 529


def test_the_operators_faults_and_an_error_dressed_as_a_200():
    faults = ["http-402:1", "credit-400:2", "model-404:3", "error-200:4", "error-200:5"]
    with running_in_thread(build_app(TASK.name, faults=faults)) as running:
        claude = anthropic.Anthropic(base_url=running.base_url, api_key="dummy", max_retries=0)
        oai = openai.OpenAI(base_url=f"{running.base_url}/v1", api_key="dummy", max_retries=0)
        with pytest.raises(openai.APIStatusError) as payment:
            oai.chat.completions.create(model="m", messages=_chat_messages())
        assert payment.value.status_code == 402 and "Insufficient credits" in payment.value.body["message"]
        with pytest.raises(anthropic.BadRequestError) as credit:
            claude.messages.create(**_anthropic_body())
        assert credit.value.body["error"]["type"] == "invalid_request_error"
        assert credit.value.body["error"]["message"].startswith("Your credit balance is too low")
        with pytest.raises(anthropic.NotFoundError) as missing:
            claude.messages.create(**_anthropic_body())
        assert missing.value.body["error"]["message"] == f"model: {_anthropic_body()['model']}"
        for stream in (False, True):
            body = json.dumps({"model": "m", "messages": _chat_messages(), "stream": stream}).encode()
            request = urllib.request.Request(running.base_url + "/v1/chat/completions", data=body, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
                text = response.read().decode()
            error = json.loads(text.removeprefix("data: ").strip())
            assert error == {"error": {"code": 502, "message": "Provider returned error"}}


def test_a_slow_request_gets_the_answer_it_would_have_got_a_second_late():
    with running_in_thread(build_app(TASK.name)) as plain:
        expected = anthropic.Anthropic(base_url=plain.base_url, api_key="dummy", max_retries=0).messages.create(**_anthropic_body())
    with running_in_thread(build_app(TASK.name, faults=["slow:*"])) as running:
        claude = anthropic.Anthropic(base_url=running.base_url, api_key="dummy", max_retries=0)
        started = time.monotonic()
        message = claude.messages.create(**_anthropic_body())
        waited = time.monotonic() - started
    assert waited >= SLOW_S

    def shown(m):  # ids are fresh on every answer
        return m.stop_reason, m.usage, [(b.type, getattr(b, "text", None), getattr(b, "input", None)) for b in m.content]

    assert shown(message) == shown(expected)


@pytest.mark.parametrize("spec", ["hang:0", "http-418:1", "hang:*,", "cut-stream", "slow"])
def test_a_malformed_fault_is_refused(spec):
    with pytest.raises(UsageProblem, match="--fault"):
        build_app(faults=[spec])


def test_only_one_fault_for_every_request():
    with pytest.raises(UsageProblem, match="every request"):
        build_app(faults=["hang:*", "http-429:*"])


@pytest.mark.parametrize("path, body, first", [
    ("/v1/messages", {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "stream": True}, "message_start"),
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True}, None),
    ("/v1/responses", {"model": "m", "input": "x", "stream": True}, "response.created"),
])
def test_cut_stream_sends_only_the_start_event(path, body, first):
    with running_in_thread(build_app(faults=["cut-stream:1"])) as running:
        connection = http.client.HTTPConnection(running.host, running.port, timeout=10)
        connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.status == 200
        with pytest.raises(http.client.IncompleteRead) as cut:
            response.read()
        connection.close()
    frames = _events(cut.value.partial)
    assert len(frames) == 1 and frames[0][0] == first
    assert frames[0][1] != "[DONE]"


def test_pinned_task_ignores_the_prompt(claude):
    with running_in_thread(build_app("semver-precedence")) as running:
        client = anthropic.Anthropic(base_url=running.base_url, api_key="dummy", max_retries=0)
        message = client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "do the thing"}], tools=ANTHROPIC_TOOLS)
    assert message.content[-1].input == {"file_path": "pkgversions/version.py"}


def test_build_app_refuses_unknown_task_and_bad_fault():
    from campaign.errors import UsageProblem

    with pytest.raises(UsageProblem, match="--task"):
        build_app("no-such-task")
    with pytest.raises(UsageProblem, match="--fault"):
        build_app(faults=["explode:1"])
