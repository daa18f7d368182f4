"""The type checks themselves: they must see what pydantic lets through by default (lazy iterables, unknown keys)."""

from tests.providers import sdk_types

GOOD_ANTHROPIC = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
}


def test_valid_payloads_pass() -> None:
    assert sdk_types.anthropic(GOOD_ANTHROPIC) == []
    assert sdk_types.openai_chat({"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}) == []
    assert sdk_types.gemini({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}) == []
    assert (
        sdk_types.openai_responses({"model": "gpt-5", "input": [{"type": "message", "role": "user", "content": "hi"}]})
        == []
    )


def test_a_malformed_block_inside_a_lazy_iterable_is_caught() -> None:
    bad = {
        **GOOD_ANTHROPIC,
        "messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "x", "input": "s"}]}],
    }
    errors = sdk_types.anthropic(bad)
    assert any("id: Field required" in error for error in errors)


def test_unknown_keys_are_caught_at_any_depth() -> None:
    deep = {
        **GOOD_ANTHROPIC,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x", "x": 1}}
                ],
            }
        ],
    }
    assert any("source.x: Extra inputs are not permitted" in error for error in sdk_types.anthropic(deep))
    chat = {"model": "gpt-5", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache": 1}]}]}
    assert any("cache: Extra inputs are not permitted" in error for error in sdk_types.openai_chat(chat))


def test_unknown_request_fields_are_caught() -> None:
    assert sdk_types.anthropic({**GOOD_ANTHROPIC, "temperatur": 1}) != []
    assert sdk_types.gemini({"contents": [], "model": "gemini"}) == ["body.model: unknown field"]


def test_gemini_parts_reject_unknown_keys_and_string_args() -> None:
    bad = {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": "{}"}}]}]}
    assert sdk_types.gemini(bad) != []
