"""POST /chat for the ai-sdk target: told which model it will call (``provider/modelId``), it keeps what
belongs to that model and strips what another model wrote, as the native adapters do."""

from typing import Any

import httpx
import pytest

from tests.api.wire import append, assistant, new_session, tool_result, user
from tests.providers.ai_sdk_preflight import ensure_installed, preflight
from tests.providers.payload_check import problems

SIGNATURE = "c2lnbmVkLWJ5LWdlbWluaQ=="
GEMINI_3 = {"provider": "google", "model": "gemini-3-pro-preview"}
GOOGLE = {"google": {"thoughtSignature": SIGNATURE}}


async def chat(client: httpx.AsyncClient, model: str, **body: Any) -> dict[str, Any]:
    response = await client.post("/chat", json={"sessionId": "s1", "provider": "ai-sdk", "model": model, **body})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert problems("ai-sdk", answer["payload"]) == []
    return answer


def assistant_parts(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for message in payload["messages"] if message["role"] == "assistant" for part in message["content"]]


async def gemini_tool_loop(client: httpx.AsyncClient) -> None:
    """A Gemini 3 turn that thought, then called a tool; its result is in: the loop goes on with this turn."""
    await new_session(client)
    turn = [
        {"type": "reasoning", "text": "I should list the files.", "providerOptions": GOOGLE},
        {"type": "tool-call", "toolCallId": "c1", "toolName": "ls", "input": {}, "providerOptions": GOOGLE},
    ]
    await append(client, "s1", user("What is here?"), assistant(turn, id="a1", **GEMINI_3))
    await append(client, "s1", tool_result("c1", "ls", "README.md"))


async def test_a_gemini_3_tool_loop_through_the_ai_sdk_keeps_the_signatures_of_the_current_turn(
    client: httpx.AsyncClient,
) -> None:
    await gemini_tool_loop(client)
    answer = await chat(client, "google/gemini-3-pro-preview")
    reasoning, call = assistant_parts(answer["payload"])
    assert reasoning == {"type": "reasoning", "text": "I should list the files.", "providerOptions": GOOGLE}
    assert call["providerOptions"] == GOOGLE
    assert answer["payload"]["model"] == "google/gemini-3-pro-preview"
    ensure_installed()
    assert preflight([answer["payload"]]) == [{"ok": True}]


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "google/gemini-2.5-pro", "gemini-3-pro-preview"])
async def test_another_model_or_a_bare_id_gets_neither_the_reasoning_nor_the_signatures(
    client: httpx.AsyncClient, model: str
) -> None:
    await gemini_tool_loop(client)
    answer = await chat(client, model)
    [call] = assistant_parts(answer["payload"])
    assert call["type"] == "tool-call" and "providerOptions" not in call
    assert "reasoning dropped" in str(answer["diagnostics"]["reasons"]["a1"])


async def test_a_vertex_model_reads_the_signature_under_its_own_namespace(client: httpx.AsyncClient) -> None:
    await gemini_tool_loop(client)
    answer = await chat(client, "vertex/gemini-3-pro-preview")
    _, call = assistant_parts(answer["payload"])
    assert call["providerOptions"] == {**GOOGLE, "vertex": {"thoughtSignature": SIGNATURE}}


async def test_a_gemini_3_call_without_its_signature_gets_googles_sentinel(client: httpx.AsyncClient) -> None:
    await new_session(client)
    call = {"type": "tool-call", "toolCallId": "c1", "toolName": "ls", "input": {}}
    await append(client, "s1", user("What is here?"), assistant([call], **GEMINI_3), tool_result("c1", "ls", "a"))
    answer = await chat(client, "google/gemini-3-pro-preview")
    [sent] = assistant_parts(answer["payload"])
    assert sent["providerOptions"] == {"google": {"thoughtSignature": "skip_thought_signature_validator"}}
    assert "thought-signature-sentinel" in {repair["rule"] for repair in answer["diagnostics"]["repairs"]}


async def test_openai_reasoning_and_item_ids_stay_for_the_model_that_wrote_them(client: httpx.AsyncClient) -> None:
    await new_session(client)
    reasoning = {
        "type": "reasoning",
        "text": "plan",
        "providerOptions": {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "enc"}},
    }
    text = {"type": "text", "text": "Done.", "providerOptions": {"openai": {"itemId": "msg_1"}}}
    await append(
        client, "s1", user("Go"), assistant([reasoning, text], provider="openai", model="gpt-5"), user("Thanks")
    )
    own = assistant_parts((await chat(client, "openai/gpt-5"))["payload"])
    assert own == [reasoning, text]
    other = assistant_parts((await chat(client, "openai/gpt-5-mini"))["payload"])
    assert other == [{"type": "text", "text": "Done."}]


async def test_the_reasoning_effort_goes_into_the_providers_own_options(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("Think hard"))
    cases = {
        "openai/gpt-5": {"openai": {"reasoningEffort": "high"}},
        "anthropic/claude-sonnet-4-5": {"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 16_000}}},
        "anthropic/claude-opus-4-6": {"anthropic": {"thinking": {"type": "adaptive"}, "effort": "high"}},
        "google/gemini-2.5-pro": {"google": {"thinkingConfig": {"thinkingBudget": 16_000, "includeThoughts": True}}},
        "google/gemini-3-pro-preview": {
            "google": {"thinkingConfig": {"thinkingLevel": "high", "includeThoughts": True}}
        },
    }
    for model, options in cases.items():
        assert (await chat(client, model, variant="high"))["payload"]["providerOptions"] == options, model


async def test_a_thinking_budget_past_the_models_output_limit_is_cut_under_it(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("Think very hard"))
    for model, limit in [("anthropic/claude-sonnet-4-5", 64_000), ("anthropic/claude-opus-4-1", 32_000)]:
        payload = (await chat(client, model, variant="100000"))["payload"]
        assert payload["providerOptions"]["anthropic"]["thinking"]["budgetTokens"] == limit - 1, model
        assert "maxOutputTokens" not in payload
        asked = (await chat(client, model, variant="100000", maxOutputTokens=5_000))["payload"]
        assert asked["providerOptions"]["anthropic"]["thinking"]["budgetTokens"] == 4_999


async def test_a_claude_history_of_calls_with_no_tools_gets_the_placeholder_tool(client: httpx.AsyncClient) -> None:
    await new_session(client)
    call = {"type": "tool-call", "toolCallId": "c1", "toolName": "ls", "input": {}}
    await append(client, "s1", user("What is here?"), assistant([call]), tool_result("c1", "ls", "README.md"))
    claude = (await chat(client, "anthropic/claude-sonnet-4-5"))["payload"]
    assert list(claude["tools"]) == ["no_tools_available"]
    gpt = (await chat(client, "openai/gpt-5"))["payload"]
    assert "tools" not in gpt


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "google/gemini-2.5-pro", "openai/gpt-5"])
async def test_a_history_that_opens_on_the_assistant_gets_a_user_turn_first(
    client: httpx.AsyncClient, model: str
) -> None:
    await new_session(client)
    await append(client, "s1", assistant("Hello! How can I help?"), user("Fix the build"))
    answer = await chat(client, model)
    first = answer["payload"]["messages"][0]
    assert first == {"role": "user", "content": [{"type": "text", "text": "[Start of conversation]"}]}
    assert "starts-on-assistant" in str(answer["diagnostics"])
