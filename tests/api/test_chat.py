"""POST /chat: a payload the provider accepts, built from the stored session, with context accounting."""

import httpx
import pytest

from tests.api.wire import append, assistant, every_kind, new_session, tool_call, tool_result, user
from tests.providers.payload_check import problems

PROVIDERS = {
    "openai": "gpt-4.1",
    "openai-responses": "gpt-4.1",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-pro",
    "ai-sdk": "claude-sonnet-4-5",
}


async def chat(client: httpx.AsyncClient, **body: object) -> httpx.Response:
    return await client.post("/chat", json={"sessionId": "s1", **body})


@pytest.mark.parametrize(("provider", "model"), PROVIDERS.items())
async def test_every_provider_gets_a_payload_it_accepts_from_a_session_with_every_kind(
    client: httpx.AsyncClient, provider: str, model: str
) -> None:
    await new_session(client)
    await append(client, "s1", *every_kind(), tool_call("c9", "grep", id="interrupted", pattern="x"))
    tools = [{"name": "grep", "description": "Search", "inputSchema": {"type": "object", "properties": {}}}]
    response = await chat(client, provider=provider, model=model, system="Be brief.", tools=tools, maxOutputTokens=1024)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["provider"] == provider
    assert body["model"] == model
    assert problems(provider, body["payload"], model=model) == []
    rules = {repair["rule"] for repair in body["diagnostics"]["repairs"]}
    assert rules, "the interrupted call must be reported as repaired"
    assert body["context"]["window"]["source"] == "catalog"
    assert body["context"]["compactionDue"] is False


async def test_an_interrupted_tool_call_is_answered_with_an_error_result(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("read it"), tool_call("c1", "read_file", path="a"), user("never mind"))
    payload = (await chat(client, provider="anthropic", model="claude-sonnet-4-5")).json()["payload"]
    results = [
        block
        for message in payload["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 1
    assert results[0]["is_error"] is True


async def test_unknown_provider_is_422_listing_the_supported_ones(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await chat(client, provider="cohere", model="x")
    assert response.status_code == 422
    problem = response.json()
    assert problem["field"] == "provider"
    for provider in PROVIDERS:
        assert provider in problem["detail"]


async def test_a_run_supplies_model_system_and_tools_unless_the_request_overrides_them(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    tools = [{"name": "read_file", "description": "Read a file", "inputSchema": {"type": "object"}}]
    run = await client.post(
        "/sessions/s1/runs",
        json={"id": "r1", "model": "anthropic/claude-sonnet-4-5", "system": "From the run.", "tools": tools},
    )
    assert run.status_code == 201
    await append(client, "s1", user("hello"))
    from_run = (await chat(client, provider="anthropic", runId="r1")).json()
    assert from_run["model"] == "claude-sonnet-4-5"
    assert "From the run." in str(from_run["payload"]["system"])
    assert from_run["payload"]["tools"][0]["name"] == "read_file"
    overridden = (await chat(client, provider="anthropic", runId="r1", model="claude-opus-4", system="Mine.")).json()
    assert overridden["model"] == "claude-opus-4"
    assert "Mine." in str(overridden["payload"]["system"])


async def test_model_is_required_without_a_run(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hello"))
    response = await chat(client, provider="openai")
    assert response.status_code == 422
    assert response.json()["field"] == "model"


async def test_a_model_named_for_another_provider_is_said_to_be_one_when_the_request_names_none(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client, model="anthropic/claude-sonnet-4-5")
    await append(client, "s1", user("hello"))
    response = await chat(client, provider="openai")
    assert response.status_code == 422
    assert response.json()["field"] == "model"
    assert "the session names anthropic/claude-sonnet-4-5, a model of another provider" in response.json()["detail"]


async def test_unknown_session_or_run_is_404_naming_the_field(client: httpx.AsyncClient) -> None:
    missing_session = await client.post("/chat", json={"sessionId": "nope", "provider": "openai", "model": "m"})
    assert missing_session.status_code == 404
    assert missing_session.json()["field"] == "sessionId"
    await new_session(client)
    missing_run = await chat(client, provider="openai", model="m", runId="nope")
    assert missing_run.status_code == 404
    assert missing_run.json()["field"] == "runId"


async def test_mutations_apply_to_one_request_and_are_never_stored(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hello", id="m1"), assistant("hi", id="m2"))
    mutations = [
        {"op": "append", "role": "user", "parts": [{"type": "text", "text": "Keep it short."}]},
        {"op": "insertBefore", "messageId": "m1", "role": "user", "parts": [{"type": "text", "text": "Context."}]},
    ]
    body = (await chat(client, provider="openai", model="gpt-4.1", mutations=mutations)).json()
    texts = str(body["payload"]["messages"])
    assert "Keep it short." in texts and "Context." in texts
    assert len(body["diagnostics"]["injectedNotes"]) == 2
    assert (await client.get("/sessions/s1")).json()["messageCount"] == 2


async def test_a_mutation_naming_an_unknown_message_is_422(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hello", id="m1"))
    mutations = [{"op": "insertAfter", "messageId": "ghost", "parts": [{"type": "text", "text": "x"}]}]
    response = await chat(client, provider="openai", model="gpt-4.1", mutations=mutations)
    assert response.status_code == 422
    assert response.json()["field"].startswith("mutations[0]")


async def test_context_reports_the_window_and_whether_compaction_is_due(client: httpx.AsyncClient) -> None:
    await new_session(client, contextWindowTokens=1000)
    await append(client, "s1", user("x" * 4000))
    context = (await chat(client, provider="anthropic", model="claude-sonnet-4-5")).json()["context"]
    assert context["window"]["tokens"] == 1000
    assert context["window"]["source"] == "session"
    assert context["compactionDue"] is True


async def test_a_small_session_window_caps_the_default_max_tokens_below_it(client: httpx.AsyncClient) -> None:
    """Claude refuses a prompt whose max_tokens takes it past the window, before compaction would be due."""
    await new_session(client, contextWindowTokens=100_000)
    await append(client, "s1", user("x" * 120_000))
    body = (await chat(client, provider="anthropic", model="claude-sonnet-4-20250514")).json()
    assert body["payload"]["max_tokens"] == 50_000
    assert body["context"]["maxOutputTokens"] == 50_000
    assert body["context"]["estimatedTokens"] + 50_000 <= 100_000
    assert body["context"]["compactionDue"] is False


async def test_a_prompt_past_the_window_says_the_provider_will_refuse_it(client: httpx.AsyncClient) -> None:
    await new_session(client, contextWindowTokens=1000)
    await append(client, "s1", user("x" * 8000))
    context = (await chat(client, provider="anthropic", model="claude-sonnet-4-5")).json()["context"]
    assert context["compactionDue"] is True
    assert "exceed the window of 1000" in context["reason"]


async def test_projection_options_shape_the_payload(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", tool_call("c1", "read", id="t1"), tool_result("c1", "read", "y" * 500, id="t2"))
    body = (await chat(client, provider="openai", model="gpt-4.1", projection={"toolResultSoftLimitChars": 100})).json()
    assert "t2" in body["diagnostics"]["truncatedMessageIds"]
