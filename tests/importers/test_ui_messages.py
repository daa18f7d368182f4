"""AI SDK UIMessage[] (what useChat keeps) imported as ``ai-sdk``: the ModelMessages convertToModelMessages
would send, step by step, with what only the UI shows left out and reported."""

import json
from typing import Any

from app.importers.imported import ImportResult
from app.importers.registry import parse_import
from tests.importers import checks
from tests.importers.checks import parts


def parse(messages: list[dict[str, Any]], **options: Any) -> ImportResult:
    return parse_import("ai-sdk", json.dumps(messages).encode(), **options)


WEATHER_CHAT: list[dict[str, Any]] = [
    {"id": "sys", "role": "system", "parts": [{"type": "text", "text": "You forecast."}]},
    {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is the weather in Berlin?"}]},
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": "Ask the tool.", "providerMetadata": {"anthropic": {"signature": "sig"}}},
            {
                "type": "tool-getWeather",
                "toolCallId": "call_1",
                "state": "output-available",
                "input": {"city": "Berlin"},
                "output": {"tempC": 21},
            },
            {"type": "step-start"},
            {"type": "text", "text": "It is 21 degrees in Berlin.", "state": "done"},
            {"type": "source-url", "sourceId": "s1", "url": "https://weather.example"},
            {"type": "data-forecast", "data": {"days": 3}},
        ],
    },
]


def test_a_use_chat_history_becomes_the_steps_and_results_its_model_saw() -> None:
    result = parse(WEATHER_CHAT, strict=True)
    [session] = result.sessions
    assert [(m.id, m.role) for m in session.messages] == [
        ("sys", "system"),
        ("u1", "user"),
        ("a1", "assistant"),
        ("a1:results", "tool"),
        ("a1:step-2", "assistant"),
    ]
    system, user, call, results, answer = session.messages
    assert (system.content, user.content) == (
        "You forecast.",
        [{"type": "text", "text": "What is the weather in Berlin?"}],
    )
    assert call.content == [
        {"type": "reasoning", "text": "Ask the tool.", "providerOptions": {"anthropic": {"signature": "sig"}}},
        {"type": "tool-call", "toolCallId": "call_1", "toolName": "getWeather", "input": {"city": "Berlin"}},
    ]
    assert results.content == [
        {
            "type": "tool-result",
            "toolCallId": "call_1",
            "toolName": "getWeather",
            "output": {"type": "json", "value": {"tempC": 21}},
        }
    ]
    assert answer.content == [{"type": "text", "text": "It is 21 degrees in Berlin."}]
    assert [r.detail for r in result.report.repairs] == [
        "source-url part left out (shown in the UI, never sent to the model)",
        "data-forecast part left out (shown in the UI, never sent to the model)",
    ]
    assert checks.append_problems(session) == []
    checks.assert_every_call_answered_or_reported(result)


def test_each_tool_state_is_the_call_and_result_the_model_saw() -> None:
    tools = [
        {
            "type": "dynamic-tool",
            "toolName": "lookup",
            "toolCallId": "c1",
            "state": "output-error",
            "input": {},
            "errorText": "timeout",
        },
        {
            "type": "tool-deleteFile",
            "toolCallId": "c2",
            "state": "output-denied",
            "input": {"path": "/"},
            "approval": {"id": "ap1", "approved": False, "reason": "Never the root."},
        },
        {
            "type": "tool-webSearch",
            "toolCallId": "c3",
            "state": "output-available",
            "input": {"query": "news"},
            "output": "nothing new",
            "providerExecuted": True,
        },
        {"type": "tool-slow", "toolCallId": "c4", "state": "input-streaming", "input": {"q": "par"}},
    ]
    history: list[dict[str, Any]] = [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Go"}]},
        {"id": "a1", "role": "assistant", "parts": tools},
    ]
    [session] = parse(history).sessions
    _, assistant, results = session.messages
    assert [(p["type"], p.get("toolCallId")) for p in parts(assistant)] == [
        ("tool-call", "c1"),
        ("tool-call", "c2"),
        ("tool-approval-request", "c2"),
        ("tool-call", "c3"),
        ("tool-result", "c3"),
    ]
    assert parts(assistant)[4]["providerExecuted"] is True
    assert [(p["type"], p.get("output")) for p in parts(results)] == [
        ("tool-result", {"type": "error-text", "value": "timeout"}),
        ("tool-approval-response", None),
        ("tool-result", {"type": "execution-denied", "reason": "Never the root."}),
    ]
    assert checks.append_problems(session) == []
