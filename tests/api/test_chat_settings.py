"""Runs drive the request: a run's variant, format, tools map and agent reach /chat's payload as each provider
takes them, unless the request says otherwise."""

from typing import Any

import httpx
import pytest

from tests.api.wire import append, new_session, user
from tests.providers.payload_check import problems

MODELS = {
    "openai": "gpt-5",
    "openai-responses": "gpt-5",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-pro",
    "ai-sdk": "openai/gpt-5",
}
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
FORMAT = {"type": "json_schema", "schema": SCHEMA, "name": "verdict", "strict": True, "retryCount": 2}
TOOLS = [
    {"name": name, "description": name, "inputSchema": {"type": "object"}} for name in ("bash", "edit", "read", "mcp_x")
]


async def chat(client: httpx.AsyncClient, provider: str, **body: Any) -> dict[str, Any]:
    request = {"sessionId": "s1", "provider": provider, "model": MODELS[provider], "runId": "r1", **body}
    response = await client.post("/chat", json=request)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert problems(provider, answer["payload"], model=MODELS[provider]) == []
    return answer


async def session_with_run(client: httpx.AsyncClient, **run: Any) -> None:
    await new_session(client)
    created = await client.post("/sessions/s1/runs", json={"id": "r1", **run})
    assert created.status_code == 201, created.text
    await append(client, "s1", user("Is it done?"))


EFFORT_FIELDS = {
    "openai": ("reasoning_effort", "high"),
    "openai-responses": ("reasoning", {"effort": "high"}),
    "anthropic": ("thinking", {"type": "enabled", "budget_tokens": 16_000}),
    "gemini": ("generationConfig", {"thinkingConfig": {"thinkingBudget": 16_000, "includeThoughts": True}}),
    "ai-sdk": ("providerOptions", {"openai": {"reasoningEffort": "high"}}),
}


@pytest.mark.parametrize("provider", MODELS)
async def test_a_runs_variant_is_the_providers_reasoning_effort(client: httpx.AsyncClient, provider: str) -> None:
    await session_with_run(client, variant="high")
    field, value = EFFORT_FIELDS[provider]
    payload = (await chat(client, provider))["payload"]
    assert payload[field] == value
    if provider == "anthropic":
        assert payload["max_tokens"] > 16_000


async def test_the_requests_variant_overrides_the_runs(client: httpx.AsyncClient) -> None:
    await session_with_run(client, variant="high")
    assert (await chat(client, "openai", variant="low"))["payload"]["reasoning_effort"] == "low"
    budget = (await chat(client, "anthropic", variant="8000"))["payload"]["thinking"]
    assert budget == {"type": "enabled", "budget_tokens": 8000}
    assert (await chat(client, "anthropic", variant="none"))["payload"]["thinking"] == {"type": "disabled"}


async def test_the_sessions_model_variant_goes_with_the_sessions_model_only(client: httpx.AsyncClient) -> None:
    model = {"providerID": "openai", "modelID": "gpt-5", "variant": "high"}
    await new_session(client, model=model)
    await append(client, "s1", user("Is it done?"))

    async def effort(**asked: Any) -> Any:
        response = await client.post("/chat", json={"sessionId": "s1", "provider": "openai", **asked})
        assert response.status_code == 200, response.text
        return response.json()["payload"].get("reasoning_effort")

    assert await effort() == "high"
    assert await effort(variant="low") == "low"
    assert await effort(model="o3") is None


OLDER_MODELS = {
    "openai": ("gpt-4o", "reasoning_effort"),
    "openai-responses": ("gpt-4.1-mini", "reasoning"),
    "anthropic": ("claude-3-5-sonnet-20241022", "thinking"),
    "gemini": ("gemini-2.0-flash", "generationConfig"),
    "ai-sdk": ("anthropic/claude-3-5-haiku-latest", "providerOptions"),
}


@pytest.mark.parametrize("provider", MODELS)
async def test_a_variant_for_a_model_that_does_not_reason_is_left_out_with_a_repair(
    client: httpx.AsyncClient, provider: str
) -> None:
    await session_with_run(client, variant="high")
    model, field = OLDER_MODELS[provider]
    answer = await chat(client, provider, model=model)
    assert field not in answer["payload"]
    assert "effort-unsupported" in str(answer["diagnostics"]["repairs"])


FORMAT_FIELDS = {
    "openai": lambda p: (
        p["response_format"]
        == {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True}}
    ),
    "openai-responses": lambda p: (
        p["text"] == {"format": {"type": "json_schema", "name": "verdict", "schema": SCHEMA, "strict": True}}
    ),
    "anthropic": lambda p: p["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}},
    "gemini": lambda p: p["generationConfig"] == {"responseMimeType": "application/json", "responseSchema": SCHEMA},
    "ai-sdk": lambda p: p["output"] == {"type": "object", "schema": SCHEMA, "name": "verdict"},
}


@pytest.mark.parametrize("provider", MODELS)
async def test_a_runs_format_is_the_providers_structured_output(client: httpx.AsyncClient, provider: str) -> None:
    await session_with_run(client, format=FORMAT)
    assert FORMAT_FIELDS[provider]((await chat(client, provider))["payload"])


async def test_gemini_gets_the_schema_in_its_own_subset_and_is_told_what_was_left_out(
    client: httpx.AsyncClient,
) -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"answer": {"type": ["string", "null"]}, "kind": {"const": "final"}},
        "additionalProperties": False,
    }
    await session_with_run(client, format={"type": "json_schema", "schema": schema})
    answer = await chat(client, "gemini")
    assert answer["payload"]["generationConfig"]["responseSchema"] == {
        "type": "object",
        "properties": {"answer": {"type": "string", "nullable": True}, "kind": {"enum": ["final"]}},
    }
    [dropped] = [r for r in answer["diagnostics"]["repairs"] if r["rule"] == "schema-keys-dropped"]
    assert "$schema" in dropped["detail"] and "additionalProperties" in dropped["detail"]


async def test_a_text_format_asks_for_nothing(client: httpx.AsyncClient) -> None:
    await session_with_run(client, format={"type": "text"})
    payload = (await chat(client, "openai"))["payload"]
    assert "response_format" not in payload


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("variant", "turbo"),
        ("variant", "-5"),
        ("format", {"type": "yaml"}),
        ("format", {"type": "json_schema"}),
        ("format", {"type": "json_schema", "schema": {}, "name": "has space"}),
        ("format", "json"),
    ],
)
async def test_a_variant_or_format_no_provider_can_take_is_422_on_the_run_and_on_chat(
    client: httpx.AsyncClient, field: str, value: Any
) -> None:
    await session_with_run(client)
    run = await client.post("/sessions/s1/runs", json={"id": "r2", field: value})
    assert run.status_code == 422
    assert field in str(run.json())
    response = await client.post(
        "/chat", json={"sessionId": "s1", "provider": "openai", "model": "gpt-5", field: value}
    )
    assert response.status_code == 422
    assert field in str(response.json())


async def test_the_runs_tools_map_switches_the_given_tools_on_and_off(client: httpx.AsyncClient) -> None:
    await session_with_run(client, tools={"bash": True, "edit": False, "mcp_*": False})
    answer = await chat(client, "openai", tools=TOOLS)
    assert [tool["function"]["name"] for tool in answer["payload"]["tools"]] == ["bash", "read"]
    assert any("edit, mcp_x" in note for note in answer["diagnostics"]["injectedNotes"])
    stored = (await client.get("/sessions/s1/runs/r1")).json()
    assert stored["tools"] == {"bash": True, "edit": False, "mcp_*": False}


async def test_the_runs_agent_is_the_agent_the_view_is_built_for_unless_the_request_names_one(
    client: httpx.AsyncClient,
) -> None:
    await session_with_run(client, agent="build")
    assert (await chat(client, "openai"))["agent"] == "build"
    assert (await chat(client, "openai", agent="plan"))["agent"] == "plan"
