"""POST /chat's last and injected turns: a trailing assistant turn is continued only when a prefill is asked of
a target that takes one, and runtime reminders travel inside the user turn they belong to."""

from typing import Any

import httpx
import pytest

from tests.api.wire import append, assistant, new_session, runtime, tool_call, tool_result, user
from tests.providers.ai_sdk_preflight import ensure_installed, preflight
from tests.providers.payload_check import problems

MODELS = {
    "openai": "gpt-5",
    "openai-responses": "gpt-5",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-pro",
    "ai-sdk": "anthropic/claude-sonnet-4-5",
}
STARTED: list[dict[str, Any]] = [
    {"type": "reasoning", "text": "Draft it.", "providerOptions": {"anthropic": {"signature": "sig=="}}},
    {"type": "text", "text": "Here is the poem:\n"},
]


async def chat(client: httpx.AsyncClient, provider: str, **body: Any) -> httpx.Response:
    model = body.pop("model", MODELS[provider])
    return await client.post("/chat", json={"sessionId": "s1", "provider": provider, "model": model, **body})


async def started_answer(client: httpx.AsyncClient) -> None:
    await new_session(client)
    producer = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
    await append(client, "s1", user("Write a poem."), assistant(STARTED, id="a1", **producer))


async def test_by_default_a_trailing_assistant_turn_gets_a_user_turn_after_it(client: httpx.AsyncClient) -> None:
    await started_answer(client)
    payload = (await chat(client, "anthropic")).json()["payload"]
    assert payload["messages"][-1]["role"] == "user"


@pytest.mark.parametrize(
    ("provider", "model"), [("anthropic", "claude-sonnet-4-5"), ("ai-sdk", "anthropic/claude-3-7-sonnet")]
)
async def test_a_prefill_ends_the_payload_on_the_assistant_turn_to_continue(
    client: httpx.AsyncClient, provider: str, model: str
) -> None:
    await started_answer(client)
    response = await chat(client, provider, model=model, prefill=True)
    assert response.status_code == 200, response.text
    body = response.json()
    last = body["payload"]["messages"][-1]
    assert last["role"] == "assistant"
    assert last["content"] == [{"type": "text", "text": "Here is the poem:"}]
    assert problems(provider, body["payload"], prefill=True) == []
    rules = {repair["rule"] for repair in body["diagnostics"]["repairs"]}
    assert {"prefill-whitespace"} <= rules
    if provider == "ai-sdk":
        ensure_installed()
        assert preflight([body["payload"]]) == [{"ok": True}]


@pytest.mark.parametrize(
    ("provider", "extra"),
    [
        ("openai", {}),
        ("openai-responses", {}),
        ("gemini", {}),
        ("anthropic", {"model": "claude-opus-4-6"}),
        ("anthropic", {"variant": "high"}),
        ("ai-sdk", {"model": "openai/gpt-5"}),
    ],
)
async def test_a_prefill_the_target_or_the_request_cannot_take_is_422_naming_prefill(
    client: httpx.AsyncClient, provider: str, extra: dict[str, Any]
) -> None:
    await started_answer(client)
    response = await chat(client, provider, prefill=True, **extra)
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "prefill"


async def test_a_prefill_without_an_assistant_turn_to_continue_is_422(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("Write a poem."))
    response = await chat(client, "anthropic", prefill=True)
    assert (response.status_code, response.json()["field"]) == (422, "prefill")


def user_turns(provider: str, payload: dict[str, Any]) -> list[str]:
    """The text of each user turn, as its provider holds it (tool results excepted)."""
    match provider:
        case "openai-responses":
            items = [item for item in payload["input"] if item.get("role") == "user"]
            return [" ".join(part["text"] for part in item["content"]) for item in items]
        case "gemini":
            turns = [turn for turn in payload["contents"] if turn["role"] == "user"]
            return [" ".join(part.get("text", "") for part in turn["parts"]) for turn in turns]
        case _:
            turns = [message for message in payload["messages"] if message["role"] == "user"]
            texts = []
            for turn in turns:
                content = turn["content"]
                parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content]
                texts.append(" ".join(part for part in parts if part))
            return [text for text in texts if text]


@pytest.mark.parametrize("provider", MODELS)
async def test_reminders_travel_inside_the_user_turn_they_belong_to_or_after_the_loops_results(
    client: httpx.AsyncClient, provider: str
) -> None:
    await new_session(client)
    await append(
        client,
        "s1",
        runtime("runtime_reminder", "The repo uses tabs.", "r0"),
        user("Fix the build.", id="u1"),
        runtime("runtime_reminder", "Run the tests before answering.", "r1"),
        tool_call("c1", "bash", id="a1", command="make"),
        tool_result("c1", "bash", "ok", id="t1"),
        runtime("runtime_reminder", "The build is green now.", "r2"),
    )
    body = (await chat(client, provider, tools=[{"name": "bash", "inputSchema": {"type": "object"}}])).json()
    assert problems(provider, body["payload"], model=MODELS[provider]) == []
    turns = user_turns(provider, body["payload"])
    [turn] = [text for text in turns if "Fix the build." in text]
    for reminder in ("The repo uses tabs.", "Run the tests before answering."):
        assert reminder in turn, (provider, body["payload"])
    # One in the tool loop comes after the results and never rewrites the prompt a provider has cached.
    assert "The build is green now." not in turn
    assert "The build is green now." in turns[-1]
