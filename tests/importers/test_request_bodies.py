"""The three request formats: OpenAI Chat Completions, Anthropic Messages and AI SDK ModelMessage bodies."""

import hashlib
import json
from typing import Any

import pytest

from app.importers.imported import ImportedSession, ImportRefused, ImportResult
from app.importers.registry import parse_import
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from app.providers.chat_request import build_chat_request
from tests.importers import checks
from tests.importers.checks import parts
from tests.importers.samples import SAMPLES
from tests.providers.payload_check import problems


def parse(format: str, body: Any, **options: Any) -> ImportResult:
    return parse_import(format, json.dumps(body).encode(), **options)


def session(format: str, body: Any) -> ImportedSession:
    return parse(format, body).sessions[0]


@pytest.mark.parametrize("format", ["openai-chat", "anthropic-messages", "ai-sdk"])
def test_ids_are_positions_and_the_session_is_named_by_the_opening_or_by_the_caller(format: str) -> None:
    body = json.loads(SAMPLES[format]())
    grown = {**body, "messages": [*body["messages"], {"role": "user", "content": "Thanks"}]}
    first, later = session(format, body), session(format, grown)
    assert first.id == later.id and first.id.startswith(f"{format}-")
    assert [m.id for m in later.messages][: len(first.messages)] == [m.id for m in first.messages]
    assert later.messages[-1].id == f"m{len(grown['messages'])}"
    assert parse(format, body, session_id="mine").sessions[0].id == "mine"
    other = {**body, "messages": [{"role": "user", "content": "Something else"}, *body["messages"][1:]]}
    assert session(format, other).id != first.id


@pytest.mark.parametrize(
    ("format", "system_role"), [("openai-chat", "system"), ("openai-chat", "developer"), ("ai-sdk", "system")]
)
def test_conversations_opening_with_the_same_system_message_but_another_question_are_two_sessions(
    format: str, system_role: str
) -> None:
    system = {"role": system_role, "content": "You are the support bot of Acme."}
    late_order = [system, {"role": "user", "content": "My order 1234 is late"}]
    password = [system, {"role": "user", "content": "Reset my password"}]
    assert session(format, late_order).id != session(format, password).id
    grown = [*late_order, {"role": "assistant", "content": "Checking."}, {"role": "user", "content": "Thanks"}]
    assert session(format, grown).id == session(format, late_order).id


@pytest.mark.parametrize("format", ["openai-chat", "anthropic-messages", "ai-sdk"])
def test_a_body_opening_with_its_first_question_keeps_the_session_id_it_always_had(format: str) -> None:
    body = json.loads(SAMPLES[format]())
    body["messages"] = [message for message in body["messages"] if message.get("role") not in ("system", "developer")]
    opening = json.dumps([body.get("system"), body["messages"][:1]], sort_keys=True, separators=(",", ":"))
    assert session(format, body).id == f"{format}-{hashlib.sha256(opening.encode()).hexdigest()[:32]}"


def test_openai_tool_calls_are_parsed_and_answered_by_name() -> None:
    messages = session("openai-chat", json.loads(SAMPLES["openai-chat"]())).messages
    assert messages[0].role == "system"
    assert parts(messages[1])[1] == {
        "type": "image",
        "image": "data:image/png;base64,iVBORw0KGgo=",
        "mediaType": "image/png",
    }
    assert messages[2].content == [
        {"type": "tool-call", "toolCallId": "call_1", "toolName": "weather", "input": {"city": "Oslo"}}
    ]
    assert parts(messages[3])[0]["toolName"] == "weather"


def test_an_openai_custom_tool_call_keeps_its_name_and_free_form_input() -> None:
    patch = "*** Begin Patch\n*** Update File: README.md\n-teh\n+the\n*** End Patch"
    custom = {"id": "call_1", "type": "custom", "custom": {"name": "apply_patch", "input": patch}}
    body = [
        {"role": "user", "content": "Fix the typo in README"},
        {"role": "assistant", "content": None, "tool_calls": [custom]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Done"},
    ]
    result = parse("openai-chat", body)
    _, call, answer = result.sessions[0].messages
    assert call.content == [{"type": "tool-call", "toolCallId": "call_1", "toolName": "apply_patch", "input": patch}]
    assert parts(answer)[0]["toolName"] == "apply_patch"
    assert checks.append_problems(result.sessions[0]) == [] and result.report.repairs == []


def test_openai_legacy_function_calls_reasoning_and_broken_arguments() -> None:
    body = [
        {"role": "user", "content": "Go"},
        {
            "role": "assistant",
            "reasoning_content": "Think.",
            "content": None,
            "function_call": {"name": "f", "arguments": "{oops"},
        },
        {"role": "function", "name": "f", "content": "done"},
    ]
    result = parse("openai-chat", body)
    call_message, answer = result.sessions[0].messages[1:]
    assert call_message.content == [
        {"type": "reasoning", "text": "Think."},
        {"type": "tool-call", "toolCallId": "m2:function_call", "toolName": "f", "input": "{oops"},
    ]
    assert parts(answer)[0]["toolCallId"] == "m2:function_call"
    assert [(r.line, r.detail) for r in result.report.repairs] == [
        (2, "arguments of 'f' are not JSON: kept as the string")
    ]


def test_anthropic_results_come_before_the_text_of_their_user_message() -> None:
    messages = session("anthropic-messages", json.loads(SAMPLES["anthropic-messages"]())).messages
    assert [(m.id, m.role) for m in messages] == [
        ("system", "system"),
        ("m1", "user"),
        ("m2", "assistant"),
        ("m3", "tool"),
        ("m3:prompt", "user"),
        ("m4", "assistant"),
    ]
    assert parts(messages[2])[0]["providerOptions"] == {"anthropic": {"signature": "sig-am"}}


def test_anthropic_server_tools_stay_in_the_assistant_message_as_provider_executed() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "News?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "news"}},
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_1",
                        "content": [{"type": "web_search_result", "url": "u"}],
                    },
                    {"type": "text", "text": "Nothing new."},
                ],
            },
        ]
    }
    result = parse("anthropic-messages", body)
    call, outcome, _ = parts(result.sessions[0].messages[1])
    assert call["providerExecuted"] is True and outcome["providerExecuted"] is True
    assert (outcome["type"], outcome["toolName"], outcome["output"]["type"]) == ("tool-result", "web_search", "json")
    assert result.report.unanswered_calls == [] and result.report.orphan_results == []


def test_ai_sdk_parts_pass_through_and_older_names_are_read_as_todays() -> None:
    body = {
        "messages": [
            {"role": "user", "content": [{"type": "image", "image": "AAAA", "mimeType": "image/png"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "redacted-reasoning", "data": "opaque"},
                    {"type": "tool-call", "toolCallId": "c1", "toolName": "t", "args": {"a": 1}},
                ],
            },
            {
                "role": "tool",
                "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "t", "result": {"ok": True}}],
            },
        ]
    }
    user, assistant, tool = session("ai-sdk", body).messages
    assert user.content == [{"type": "image", "image": "AAAA", "mediaType": "image/png"}]
    assert assistant.content == [
        {"type": "reasoning", "text": "", "providerOptions": {"anthropic": {"redactedData": "opaque"}}},
        {"type": "tool-call", "toolCallId": "c1", "toolName": "t", "input": {"a": 1}},
    ]
    assert parts(tool)[0]["output"] == {"type": "json", "value": {"ok": True}}


@pytest.mark.parametrize(
    "system",
    [
        "You are terse.\n\nToday is Monday.",
        [{"role": "system", "content": "You are terse."}, {"role": "system", "content": "Today is Monday."}],
    ],
)
def test_ai_sdk_system_is_text_a_system_message_or_a_list_of_them(system: Any) -> None:
    messages = [{"role": "user", "content": "hi"}]
    [opening, _] = session("ai-sdk", {"system": system, "messages": messages}).messages
    assert (opening.id, opening.role, opening.content) == ("system", "system", "You are terse.\n\nToday is Monday.")
    cached = {"role": "system", "content": "Be brief.", "providerOptions": {"anthropic": {"cacheControl": {}}}}
    assert session("ai-sdk", {"system": cached, "messages": messages}).messages[0].content == "Be brief."


def test_ai_sdk_keys_a_newer_sdk_added_are_kept_and_unknown_parts_left_out_and_reported() -> None:
    body = [
        {
            "id": "own-id",
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache": True}, {"type": "source"}],
        },
    ]
    result = parse("ai-sdk", body)
    [message] = result.sessions[0].messages
    assert (message.id, message.content) == ("own-id", [{"type": "text", "text": "hi", "cache": True}])
    assert checks.append_problems(result.sessions[0]) == []
    assert [r.detail for r in result.report.repairs] == ["part of type 'source' left out (no part holds it)"]


@pytest.mark.parametrize("format", ["openai-chat", "anthropic-messages", "ai-sdk"])
def test_a_message_of_unknown_role_is_reported_and_strict_refuses_it(format: str) -> None:
    body = [{"role": "user", "content": "hi"}, {"role": "robot", "content": "beep"}]
    assert [s.line for s in parse(format, body).report.invalid] == [2]
    with pytest.raises(ImportRefused) as refused:
        parse(format, body, strict=True)
    assert refused.value.line == 2


@pytest.mark.parametrize("format", ["openai-chat", "anthropic-messages", "ai-sdk"])
def test_a_body_without_messages_is_refused(format: str) -> None:
    with pytest.raises(ImportRefused):
        parse(format, {"model": "x"})


def test_an_anthropic_server_tool_is_stored_as_imported_and_replayed_to_anthropic_in_its_own_blocks() -> None:
    """The importer keeps the AI SDK shape (the call and its result in the assistant message); the append
    schema holds it, and the Anthropic payload gives the blocks back as Anthropic wrote them."""
    hit = {
        "type": "web_search_result",
        "url": "https://x.dev",
        "title": "X",
        "encrypted_content": "enc",
        "page_age": "1d",
    }
    server_use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    searched = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [hit]}
    body = {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": "News?"},
            {"role": "assistant", "content": [server_use, searched, {"type": "text", "text": "X is new."}]},
            {"role": "user", "content": "Thanks"},
        ],
    }
    imported = session("anthropic-messages", body)
    assert checks.append_problems(imported) == []
    messages = checks.engine_messages(imported)
    view = project(View.MODEL, messages, ProjectionContext(provider="anthropic", model="claude-sonnet-4-5"))
    payload = build_chat_request(view, provider="anthropic", model="claude-sonnet-4-5").payload
    assert payload["messages"][1] == {
        "role": "assistant",
        "content": [server_use, searched, {"type": "text", "text": "X is new."}],
    }
    assert problems("anthropic", payload) == []
