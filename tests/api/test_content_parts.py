"""The whole AI SDK v6 ModelMessage content set over HTTP: stored as written (keys a newer SDK added included),
and sent to each provider in its own form, or left out with a repair where it has none."""

import json
from typing import Any

import httpx
import pytest

from tests.api.wire import append, assistant, new_session, user
from tests.providers.ai_sdk_preflight import ensure_installed, preflight
from tests.providers.payload_check import problems

SONNET = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
OPTIONS = {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
SEARCH_CALL = {
    "type": "tool-call",
    "toolCallId": "srvtoolu_1",
    "toolName": "web_search",
    "input": {"query": "projector release"},
    "providerExecuted": True,
    "providerOptions": OPTIONS,
}
SEARCH_RESULT = {
    "type": "tool-result",
    "toolCallId": "srvtoolu_1",
    "toolName": "web_search",
    "output": {
        "type": "json",
        "value": [{"type": "web_search_result", "url": "https://x.dev", "title": "X", "encryptedContent": "enc"}],
    },
    "providerExecuted": True,
}
EVERY_PART = [
    user("Search, then draw it.", id="u1"),
    assistant(
        [
            {"type": "reasoning", "text": "Search first.", "providerOptions": {"anthropic": {"signature": "sig=="}}},
            SEARCH_CALL,
            SEARCH_RESULT,
            {"type": "text", "text": "Found it; here is a drawing.", "newSdkField": {"kept": True}},
            {"type": "file", "data": "iVBORw0KGgo=", "mediaType": "image/png", "providerOptions": OPTIONS},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "publish", "input": {}},
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1", "providerOptions": OPTIONS},
        ],
        id="a1",
        **SONNET,
    ),
    {
        "id": "t1",
        "role": "tool",
        "content": [
            {"type": "tool-approval-response", "approvalId": "ap1", "approved": False, "reason": "not yet"},
        ],
    },
    user("OK, later then.", id="u2"),
]


async def stored_session(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await append(client, "s1", *EVERY_PART)
    assert response.status_code == 201, response.text


async def test_every_part_of_the_ai_sdk_content_set_is_stored_as_written(client: httpx.AsyncClient) -> None:
    await stored_session(client)
    for message in EVERY_PART:
        stored = (await client.get(f"/sessions/s1/messages/{message['id']}")).json()
        assert stored["content"] == message["content"]


async def chat(client: httpx.AsyncClient, provider: str, model: str) -> dict[str, Any]:
    tools = [{"name": "publish", "inputSchema": {"type": "object"}}]
    request = {"sessionId": "s1", "provider": provider, "model": model, "tools": tools}
    response = await client.post("/chat", json=request)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert problems(provider, body["payload"], model=model) == [], body["payload"]
    assert "newSdkField" not in json.dumps(body["payload"])
    return body


def rules(body: dict[str, Any]) -> set[str]:
    return {repair["rule"] for repair in body["diagnostics"]["repairs"]}


async def test_anthropic_gets_its_server_tool_back_in_its_own_blocks(client: httpx.AsyncClient) -> None:
    await stored_session(client)
    body = await chat(client, "anthropic", "claude-sonnet-4-5")
    turn = body["payload"]["messages"][1]["content"]
    assert [block["type"] for block in turn] == [
        "thinking",
        "server_tool_use",
        "web_search_tool_result",
        "text",
        "tool_use",
    ]
    assert turn[1] == {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": SEARCH_CALL["input"],
    }
    hit = {"type": "web_search_result", "url": "https://x.dev", "title": "X", "encrypted_content": "enc"}
    assert turn[2] == {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [hit]}
    assert "unknown-part-keys" in rules(body)


@pytest.mark.parametrize(
    ("provider", "model"), [("openai", "gpt-5"), ("openai-responses", "gpt-5"), ("gemini", "gemini-2.5-pro")]
)
async def test_a_target_without_the_tool_leaves_it_out_and_says_so(
    client: httpx.AsyncClient, provider: str, model: str
) -> None:
    await stored_session(client)
    body = await chat(client, provider, model)
    assert "web_search" not in json.dumps(body["payload"])
    reasons = body["diagnostics"]["reasons"]["a1"]
    assert any("provider-executed tool part(s) removed" in reason for reason in reasons)


async def test_the_ai_sdk_keeps_the_providers_tool_for_its_provider_and_the_sdk_accepts_it(
    client: httpx.AsyncClient,
) -> None:
    await stored_session(client)
    body = await chat(client, "ai-sdk", "anthropic/claude-sonnet-4-5")
    [turn] = [message for message in body["payload"]["messages"] if message["role"] == "assistant"]
    executed = [part for part in turn["content"] if part.get("providerExecuted")]
    assert [part["type"] for part in executed] == ["tool-call", "tool-result"]
    ensure_installed()
    assert preflight([body["payload"]]) == [{"ok": True}]
    other = await chat(client, "ai-sdk", "openai/gpt-5")
    assert "web_search" not in json.dumps(other["payload"])


async def test_openai_responses_refers_to_its_own_built_in_tool_item(client: httpx.AsyncClient) -> None:
    await new_session(client)
    call = {
        "type": "tool-call",
        "toolCallId": "ws_1",
        "toolName": "web_search",
        "input": {},
        "providerExecuted": True,
        "providerOptions": {"openai": {"itemId": "ws_1"}},
    }
    result = {**SEARCH_RESULT, "toolCallId": "ws_1", "output": {"type": "json", "value": {"status": "completed"}}}
    turn: list[dict[str, Any]] = [call, result, {"type": "text", "text": "Nothing new."}]
    await append(client, "s1", user("News?"), assistant(turn, provider="openai", model="gpt-5"), user("Thanks"))
    body = await chat(client, "openai-responses", "gpt-5")
    assert {"type": "item_reference", "id": "ws_1"} in body["payload"]["input"]


async def test_gemini_gets_the_code_it_ran_back_as_its_own_parts(client: httpx.AsyncClient) -> None:
    await new_session(client)
    call = {
        "type": "tool-call",
        "toolCallId": "exec_1",
        "toolName": "code_execution",
        "input": {"language": "PYTHON", "code": "print(6 * 7)"},
        "providerExecuted": True,
    }
    ran = {"type": "json", "value": {"outcome": "OUTCOME_OK", "output": "42\n"}}
    result = {
        "type": "tool-result",
        "toolCallId": "exec_1",
        "toolName": "code_execution",
        "output": ran,
        "providerExecuted": True,
    }
    turn: list[dict[str, Any]] = [call, result, {"type": "text", "text": "It is 42."}]
    producer = {"provider": "google", "model": "gemini-2.5-pro"}
    await append(client, "s1", user("Compute 6*7."), assistant(turn, **producer), user("Thanks"))
    body = await chat(client, "gemini", "gemini-2.5-pro")
    assert body["payload"]["contents"][1]["parts"] == [
        {"executableCode": {"language": "PYTHON", "code": "print(6 * 7)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
        {"text": "It is 42."},
    ]
