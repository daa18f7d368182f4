from typing import Any

import pytest

from app.providers.chat_message import ChatMessage
from app.providers.errors import InvalidMaxOutputTokens, InvalidModel, InvalidToolDefinition, UnknownProvider
from app.providers.registry import SUPPORTED_PROVIDERS, build_payload

MESSAGES: list[ChatMessage] = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
TOOL: dict[str, Any] = {
    "name": "Read",
    "description": "Read a file",
    "inputSchema": {"type": "object", "properties": {"p": {}}},
}


def test_unknown_provider_error_lists_the_supported_ones() -> None:
    with pytest.raises(UnknownProvider) as raised:
        build_payload("cohere", MESSAGES, model="x")
    assert raised.value.status == 422
    assert raised.value.supported == SUPPORTED_PROVIDERS
    for name in ("openai", "openai-responses", "anthropic", "gemini", "ai-sdk"):
        assert name in raised.value.detail


@pytest.mark.parametrize(
    ("provider", "key", "expected"),
    [
        ("openai", "max_completion_tokens", 321),
        ("openai-responses", "max_output_tokens", 321),
        ("anthropic", "max_tokens", 321),
        ("ai-sdk", "maxOutputTokens", 321),
    ],
)
def test_max_output_tokens_maps_to_each_providers_field(provider: str, key: str, expected: int) -> None:
    payload, _ = build_payload(provider, MESSAGES, model="m", max_output_tokens=321)
    assert payload[key] == expected


def test_gemini_max_output_tokens_goes_in_generation_config() -> None:
    payload, _ = build_payload("gemini", MESSAGES, model="gemini-2.5-pro", max_output_tokens=321)
    assert payload["generationConfig"] == {"maxOutputTokens": 321}


def test_anthropic_always_gets_max_tokens() -> None:
    payload, _ = build_payload("anthropic", MESSAGES, model="claude-sonnet-4-5")
    assert payload["max_tokens"] == 4096


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "100"])
def test_max_output_tokens_must_be_a_positive_integer(value: object) -> None:
    with pytest.raises(InvalidMaxOutputTokens):
        build_payload("openai", MESSAGES, model="m", max_output_tokens=value)  # type: ignore[arg-type]  # bad on purpose


def test_tool_definitions_take_each_providers_shape() -> None:
    def tools(provider: str) -> object:
        payload, _ = build_payload(provider, MESSAGES, model="m", tools=[TOOL])
        return payload["tools"]

    schema = TOOL["inputSchema"]
    assert tools("openai") == [
        {"type": "function", "function": {"name": "Read", "parameters": schema, "description": "Read a file"}}
    ]
    assert tools("openai-responses") == [
        {"type": "function", "name": "Read", "parameters": schema, "strict": False, "description": "Read a file"}
    ]
    assert tools("anthropic") == [{"name": "Read", "input_schema": schema, "description": "Read a file"}]
    assert tools("gemini") == [
        {"functionDeclarations": [{"name": "Read", "parametersJsonSchema": schema, "description": "Read a file"}]}
    ]
    assert tools("ai-sdk") == {"Read": {"inputSchema": schema, "description": "Read a file"}}


def test_tool_without_schema_gets_an_empty_object_schema() -> None:
    payload, _ = build_payload("anthropic", MESSAGES, model="m", tools=[{"name": "Now"}])
    assert payload["tools"] == [{"name": "Now", "input_schema": {"type": "object", "properties": {}}}]


@pytest.mark.parametrize(
    "tool",
    [
        {"name": ""},
        {"name": "has space"},
        {"name": "x" * 65},
        {"name": "Read", "inputSchema": {"type": "string"}},
        {"name": "Read", "parameters": {}},
        {"name": "Read", "description": 3},
        {"name": "Read", "description": "bad \ud800 text"},
    ],
)
def test_invalid_tool_definition_names_the_tool(tool: dict[str, Any]) -> None:
    with pytest.raises(InvalidToolDefinition) as raised:
        build_payload("openai", MESSAGES, model="m", tools=[tool])
    assert raised.value.extensions["field"] == "tools[0]"


@pytest.mark.parametrize(
    ("tool", "detail"),
    [
        ("Read", "a tool definition must be an object"),
        ({"name": "Read", "parameters": {}, "input_schema": {}}, "unknown keys input_schema, parameters"),
        ({"name": "Read\n"}, "name must match ^[a-zA-Z0-9_-]{1,64}$"),
        ({"name": 7}, "name must match ^[a-zA-Z0-9_-]{1,64}$"),
        ({"name": "Read", "description": 3}, "description must be a string"),
        ({"name": "Read", "inputSchema": []}, "inputSchema must be a JSON Schema of type object"),
        (
            {"name": "Read", "description": "bad \ud800"},
            "contains an unpaired UTF-16 surrogate, which no provider accepts",
        ),
    ],
)
def test_an_invalid_tool_definition_says_what_is_wrong(tool: object, detail: str) -> None:
    with pytest.raises(InvalidToolDefinition) as raised:
        build_payload("openai", MESSAGES, model="m", tools=[tool])  # type: ignore[list-item]  # bad on purpose
    assert raised.value.detail == detail


def test_a_tool_defined_twice_is_refused() -> None:
    with pytest.raises(InvalidToolDefinition):
        build_payload("openai", MESSAGES, model="m", tools=[TOOL, TOOL])


@pytest.mark.parametrize("model", ["", "  ", None])
def test_model_must_be_a_non_empty_id(model: object) -> None:
    with pytest.raises(InvalidModel):
        build_payload("openai", MESSAGES, model=model)  # type: ignore[arg-type]  # bad on purpose
