"""One regression test per 400 a provider answers to a malformed history, named after the error's wording.

Each test first shows that the checkers report the error on a payload shaped like the one that caused it
(so the check is real), then builds the payload for a history that used to cause it and shows it passes.
"""

from typing import Any

from app.engine.persisted import PersistedMessage
from app.providers.chat_request import build_chat_request
from tests.builders import (
    assistant,
    call_part,
    image_part,
    media_item,
    reasoning,
    reasoning_part,
    result_part,
    system,
    text_part,
    tool_call,
    tool_calls,
    tool_result,
    tool_results,
    user,
)
from tests.providers.ai_sdk_preflight import Preflight
from tests.providers.payload_check import problems
from tests.providers.projected import raw

MODELS = {
    "openai": "gpt-5",
    "openai-responses": "gpt-5",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-3-pro-preview",
    "ai-sdk": "openai/gpt-5",
}
READ = [{"name": "Read", "inputSchema": {"type": "object"}}]


def accepted(provider: str, *messages: PersistedMessage, **options: Any) -> dict[str, Any]:
    options.setdefault("model", MODELS[provider])
    payload = build_chat_request(raw(*messages), provider=provider, **options).payload
    assert problems(provider, payload, model=options["model"]) == []
    return payload


def caught(provider: str, bad: dict[str, Any], fragment: str) -> None:
    found = problems(provider, bad, model=MODELS[provider])
    assert any(fragment in error for error in found), found


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-5", "messages": list(messages)}


def claude(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": list(messages), **extra}


ASK = {"role": "user", "content": "go"}
CALL: dict[str, Any] = {
    "role": "assistant",
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}],
}
USE: dict[str, Any] = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}],
}


# OpenAI Chat Completions ----------------------------------------------------------------------------------


def test_openai_assistant_tool_calls_must_be_followed_by_tool_messages_responding_to_each_tool_call_id() -> None:
    caught("openai", chat(ASK, CALL, {"role": "user", "content": "?"}), "did not have response messages: call_1")
    payload = accepted("openai", user("go"), tool_call("call_1", "Read"), user("?"))
    assert payload["messages"][2]["role"] == "tool"


def test_openai_insufficient_tool_messages_following_tool_calls_message() -> None:
    parallel = {**CALL, "tool_calls": [*CALL["tool_calls"], {**CALL["tool_calls"][0], "id": "call_2"}]}
    caught("openai", chat(ASK, parallel, {"role": "tool", "tool_call_id": "call_1", "content": "x"}), "call_2")
    history = (
        user("go"),
        tool_calls(call_part("call_1", "Read"), call_part("call_2", "Read")),
        tool_result("call_1", "x"),
    )
    payload = accepted("openai", *history)
    assert [m.get("tool_call_id") for m in payload["messages"][2:4]] == ["call_1", "call_2"]


def test_openai_messages_with_role_tool_must_be_a_response_to_a_preceding_message_with_tool_calls() -> None:
    caught(
        "openai", chat(ASK, {"role": "tool", "tool_call_id": "x", "content": "x"}), "must be a response to a preceeding"
    )
    payload = accepted("openai", user("go"), tool_result("x", "stray"), user("next"))
    assert all(message["role"] != "tool" for message in payload["messages"])


def test_openai_missing_parameter_tool_call_id() -> None:
    caught("openai", chat(ASK, CALL, {"role": "tool", "content": "x"}), "tool_call_id")
    payload = accepted("openai", user("go"), tool_call("call_1", "Read"), tool_result("call_1", "x"))
    assert payload["messages"][2]["tool_call_id"] == "call_1"


def test_openai_invalid_type_for_arguments_expected_a_string_but_got_an_object() -> None:
    bad_call = {**CALL, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "Read", "arguments": {}}}]}
    caught("openai", chat(ASK, bad_call), "arguments: Input should be a valid string")
    payload = accepted("openai", user("go"), tool_call("c", "Read", path="a.ts"), tool_result("c", "x"))
    assert payload["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"path": "a.ts"}'


def test_openai_missing_required_parameter_tool_calls_type() -> None:
    untyped = {**CALL, "tool_calls": [{"id": "c", "function": {"name": "Read", "arguments": "{}"}}]}
    caught("openai", chat(ASK, untyped), "type")
    payload = accepted("openai", user("go"), tool_call("c", "Read"), tool_result("c", "x"))
    assert payload["messages"][1]["tool_calls"][0]["type"] == "function"


def test_openai_missing_required_parameter_content_type() -> None:
    caught("openai", chat({"role": "user", "content": [{"text": "hi"}]}), "type")
    payload = accepted("openai", user([text_part("hi"), image_part()]))
    assert [part["type"] for part in payload["messages"][0]["content"]] == ["text", "image_url"]


def test_openai_tool_call_id_string_too_long_expected_maximum_length_40() -> None:
    long_call = {**CALL, "tool_calls": [{**CALL["tool_calls"][0], "id": "x" * 51}]}
    caught(
        "openai", chat(ASK, long_call, {"role": "tool", "tool_call_id": "x" * 51, "content": "x"}), "maximum length 40"
    )
    payload = accepted("openai", user("go"), tool_call("x" * 51, "Read"), tool_result("x" * 51, "x"))
    assert payload["messages"][1]["tool_calls"][0]["id"] == payload["messages"][2]["tool_call_id"]


def test_openai_tool_calls_empty_array_expected_minimum_length_1() -> None:
    caught("openai", chat(ASK, {"role": "assistant", "content": "x", "tool_calls": []}), "empty array")
    payload = accepted("openai", user("go"), assistant("plain answer"), user("ok"))
    assert "tool_calls" not in payload["messages"][1]


def test_openai_messages_empty_array_expected_minimum_length_1() -> None:
    caught("openai", chat(), "empty array")
    payload = accepted("openai", system("only a note"))
    assert payload["messages"][-1]["role"] == "user"


def test_openai_invalid_value_for_content_expected_a_string_got_null() -> None:
    caught("openai", chat(ASK, {"role": "assistant", "content": None}), "got null")
    payload = accepted("openai", user("q"), reasoning("only thinking", signature=None), user("and?"))
    assert all(message["role"] != "assistant" for message in payload["messages"])


def test_openai_image_urls_are_only_allowed_for_messages_with_role_user() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    caught("openai", chat(ASK, {"role": "assistant", "content": [image]}), "Image URLs are only allowed")
    screenshot = result_part("c", [{"type": "text", "text": "shot"}, media_item()], output_type="content")
    payload = accepted("openai", user("go"), tool_call("c", "Read"), tool_results(screenshot))
    assert payload["messages"][2]["role"] == "tool" and isinstance(payload["messages"][2]["content"], str)
    assert payload["messages"][3]["role"] == "user"
    assert payload["messages"][3]["content"][1]["type"] == "image_url"


def test_openai_additional_properties_are_not_allowed_id_was_unexpected() -> None:
    caught("openai", chat({**ASK, "id": "m1"}), "Extra inputs are not permitted")
    payload = accepted("openai", user("hi", id="m1"))
    assert set(payload["messages"][0]) == {"role", "content"}


def test_openai_function_name_empty_string() -> None:
    caught(
        "openai",
        chat(ASK, {**CALL, "tool_calls": [{**CALL["tool_calls"][0], "function": {"name": "", "arguments": "{}"}}]}),
        "function.name': empty string",
    )
    payload = accepted("openai", user("go"), tool_calls(call_part("c", "")), tool_result("c", "x"))
    assert payload["messages"][1]["tool_calls"][0]["function"]["name"] == "unnamed_tool"


def test_openai_function_name_string_does_not_match_pattern() -> None:
    """A tool name from an MCP server or a runtime that numbers its calls, in the history."""
    caught(
        "openai",
        chat(ASK, {**CALL, "tool_calls": [{**CALL["tool_calls"][0], "function": {"name": "a.b", "arguments": "{}"}}]}),
        "function.name': string does not match pattern",
    )
    for provider in MODELS:
        history = (user("go"), tool_calls(call_part("c", "functions.Bash:0")), tool_result("c", "x"))
        payload = str(accepted(provider, *history))
        assert "functions.Bash:0" not in payload, provider
        assert "functions_Bash_0" in payload, provider


# OpenAI Responses -----------------------------------------------------------------------------------------


def responses(*items: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-5", "input": list(items)}


FUNCTION_CALL = {"type": "function_call", "call_id": "call_1", "name": "Read", "arguments": "{}"}
SAY = {"type": "message", "role": "user", "content": "go"}


def test_responses_no_tool_output_found_for_function_call() -> None:
    caught("openai-responses", responses(SAY, FUNCTION_CALL, SAY), "No tool output found for function call call_1")
    payload = accepted("openai-responses", user("go"), tool_call("call_1", "Read"), user("go on"))
    assert payload["input"][2]["type"] == "function_call_output"


def test_responses_no_tool_call_found_for_function_call_output() -> None:
    output = {"type": "function_call_output", "call_id": "call_9", "output": "x"}
    caught("openai-responses", responses(SAY, output), "No tool call found for function call output")
    payload = accepted("openai-responses", user("go"), tool_result("call_9", "x"), user("go on"))
    assert all(item["type"] == "message" for item in payload["input"])


def test_responses_reasoning_item_was_provided_without_its_required_following_item() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
    caught("openai-responses", responses(SAY, item, SAY), "without its required following item")
    thought = reasoning_part("plan", signature=None)
    thought["providerOptions"] = {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "enc"}}
    payload = accepted("openai-responses", user("go"), assistant([thought]), user("and?"))
    assert all(item["type"] != "reasoning" for item in payload["input"])
    kept = accepted("openai-responses", user("go"), assistant([thought, text_part("done")]), user("and?"))
    assert [item["type"] for item in kept["input"][1:3]] == ["reasoning", "message"]


def test_responses_message_was_provided_without_its_required_reasoning_item() -> None:
    payload = accepted("openai-responses", user("go"), assistant("answer", provider="openai", model="gpt-5"), user("?"))
    assert all("id" not in item for item in payload["input"] if item["type"] == "message")


def test_responses_call_id_string_too_long_expected_maximum_length_64() -> None:
    long_call = {**FUNCTION_CALL, "call_id": "c" * 446}
    caught(
        "openai-responses",
        responses(SAY, long_call, {"type": "function_call_output", "call_id": "c" * 446, "output": "x"}),
        "maximum length 64",
    )
    payload = accepted("openai-responses", user("go"), tool_call("c" * 446, "Read"), tool_result("c" * 446, "x"))
    assert len(payload["input"][1]["call_id"]) <= 64


def test_responses_unknown_parameter_input_metadata() -> None:
    caught("openai-responses", responses({**SAY, "metadata": {}}), "Extra inputs are not permitted")
    payload = accepted("openai-responses", user("go", tags=["x"]))
    assert set(payload["input"][0]) == {"type", "role", "content"}


# Anthropic Messages ---------------------------------------------------------------------------------------


def test_anthropic_tool_use_ids_were_found_without_tool_result_blocks_immediately_after() -> None:
    caught("anthropic", claude(ASK, USE, ASK), "ids were found without `tool_result` blocks immediately after")
    payload = accepted("anthropic", user("go"), tool_call("toolu_1", "Read"), user("what happened?"), tools=READ)
    assert payload["messages"][2]["content"][0]["type"] == "tool_result"
    assert payload["messages"][2]["content"][0]["is_error"] is True


def test_anthropic_unexpected_tool_use_id_found_in_tool_result_blocks() -> None:
    stray = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}
    caught("anthropic", claude(stray), "unexpected `tool_use_id` found in `tool_result` blocks")
    payload = accepted("anthropic", user("go"), tool_result("toolu_9", "x"), user("?"))
    assert all(block["type"] == "text" for block in payload["messages"][0]["content"])


def test_anthropic_did_not_find_tool_result_blocks_at_the_beginning_of_this_message() -> None:
    late = {
        "role": "user",
        "content": [
            {"type": "text", "text": "wait"},
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"},
        ],
    }
    caught("anthropic", claude(ASK, USE, late, tools=READ), "at the beginning of this message")
    payload = accepted(
        "anthropic", user("go"), tool_call("toolu_1", "Read"), user("wait"), tool_result("toolu_1", "x"), tools=READ
    )
    assert [block["type"] for block in payload["messages"][2]["content"]] == ["tool_result", "text"]


def test_anthropic_text_content_blocks_must_be_non_empty() -> None:
    caught("anthropic", claude({"role": "user", "content": [{"type": "text", "text": ""}]}), "non-whitespace text")
    payload = accepted("anthropic", user([text_part(""), text_part("hi")]))
    assert payload["messages"][0]["content"] == [{"type": "text", "text": "hi"}]


def test_anthropic_text_content_blocks_must_contain_non_whitespace_text() -> None:
    caught("anthropic", claude({"role": "user", "content": [{"type": "text", "text": " \n"}]}), "non-whitespace text")
    payload = accepted(
        "anthropic", user("hi"), assistant(" \n"), tool_call("c", "Bash"), tool_result("c", "  "), tools=READ
    )
    assert payload["messages"][2]["content"][0]["content"] == [{"type": "text", "text": "(no output)"}]


def test_anthropic_all_messages_must_have_non_empty_content_except_for_the_optional_final_assistant_message() -> None:
    caught("anthropic", claude({"role": "user", "content": []}), "must have non-empty content")
    payload = accepted("anthropic", user(""), assistant(""), user("hello"))
    assert payload["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]


def test_anthropic_final_assistant_content_cannot_end_with_trailing_whitespace() -> None:
    payload = accepted("anthropic", user("hi"), assistant("Sure.  \n"))
    assert payload["messages"][-1]["role"] == "user"


def test_anthropic_roles_must_alternate_between_user_and_assistant() -> None:
    caught("anthropic", claude(ASK, ASK), "roles must alternate")
    payload = accepted("anthropic", user("one"), user("two"), system("note"), assistant("a"), assistant("b"), user("c"))
    roles = [message["role"] for message in payload["messages"]]
    assert roles == ["user", "assistant", "user"]


def test_anthropic_first_message_must_use_the_user_role() -> None:
    caught("anthropic", claude({"role": "assistant", "content": "hi"}, ASK), 'first message must use the "user" role')
    payload = accepted("anthropic", assistant("Hello! How can I help?"), user("fix the bug"))
    assert payload["messages"][0] == {"role": "user", "content": [{"type": "text", "text": "[Start of conversation]"}]}


def test_anthropic_this_model_does_not_support_assistant_message_prefill() -> None:
    caught(
        "anthropic", claude(ASK, {"role": "assistant", "content": "Sure"}), "does not support assistant message prefill"
    )
    payload = accepted("anthropic", user("hi"), assistant("hello"))
    assert payload["messages"][-1]["role"] == "user"


def test_anthropic_when_thinking_is_enabled_a_final_assistant_message_must_start_with_a_thinking_block() -> None:
    signed = reasoning_part("let me check", signature="sig-1")
    payload = accepted(
        "anthropic",
        user("go"),
        tool_calls(text_part("checking"), signed, call_part("c", "Read")),
        tool_result("c", "x"),
        tools=READ,
    )
    assert payload["messages"][1]["content"][0]["type"] == "thinking"


def test_anthropic_thinking_must_precede_tool_use_found_tool_use() -> None:
    signed = reasoning_part("then this", signature="sig-2")
    payload = accepted(
        "anthropic", user("go"), tool_calls(call_part("c", "Read"), signed), tool_result("c", "x"), tools=READ
    )
    assert [block["type"] for block in payload["messages"][1]["content"]] == ["thinking", "tool_use"]


def test_anthropic_if_an_assistant_message_contains_any_thinking_blocks_the_first_block_must_be_thinking() -> None:
    thinking = {"type": "thinking", "thinking": "t", "signature": "s"}
    caught(
        "anthropic",
        claude(
            ASK,
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, thinking, {"type": "text", "text": "b"}]},
            ASK,
        ),
        "the first block must be thinking",
    )
    payload = accepted("anthropic", user("q"), assistant("first"), reasoning("then", answer="second"), user("ok"))
    assert [block["type"] for block in payload["messages"][1]["content"]] == ["thinking", "text", "text"]


def test_anthropic_when_thinking_is_disabled_an_assistant_message_in_the_final_position_cannot_contain_thinking() -> (
    None
):
    payload = accepted("anthropic", user("q"), reasoning("hmm", answer="42"))
    assert payload["messages"][-1]["role"] == "user"


def test_anthropic_the_final_block_in_an_assistant_message_cannot_be_thinking() -> None:
    caught(
        "anthropic",
        claude(ASK, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]}, ASK),
        "cannot be `thinking`",
    )
    payload = accepted("anthropic", user("q"), reasoning("only thought"), user("well?"))
    assert all(message["role"] == "user" for message in payload["messages"])


def test_anthropic_invalid_signature_in_thinking_block() -> None:
    google = reasoning("gemini thought", answer="hi", provider="google", model="gemini-2.5-pro")
    unsigned = reasoning("aborted thought", answer="hey", signature=None)
    payload = accepted("anthropic", user("q"), google, user("again"), unsigned, user("ok"))
    blocks = [block for message in payload["messages"] for block in message["content"]]
    assert all(block["type"] != "thinking" for block in blocks)
    own = accepted("anthropic", user("q"), reasoning("mine", answer="a", signature="EqQBCkgIAR/+="), user("ok"))
    assert own["messages"][1]["content"][0] == {"type": "thinking", "thinking": "mine", "signature": "EqQBCkgIAR/+="}


def test_anthropic_tool_use_id_string_should_match_pattern() -> None:
    bad = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "functions.Bash:0", "name": "Bash", "input": {}}],
    }
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "functions.Bash:0", "content": "x"}]}
    caught("anthropic", claude(ASK, bad, result, tools=READ), "should match pattern")
    payload = accepted(
        "anthropic",
        user("go"),
        tool_call("functions.Bash:0", "Bash"),
        tool_result("functions.Bash:0", "x", tool_name="Bash"),
        tools=READ,
    )
    assert payload["messages"][1]["content"][0]["id"] == payload["messages"][2]["content"][0]["tool_use_id"]


def test_anthropic_tool_use_ids_must_be_unique() -> None:
    twice = {"role": "assistant", "content": [USE["content"][0], USE["content"][0]]}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}
    caught("anthropic", claude(ASK, twice, {"role": "user", "content": [result, result]}, tools=READ), "must be unique")
    payload = accepted(
        "anthropic",
        user("go"),
        tool_call("toolu_1", "Read"),
        tool_result("toolu_1", "a"),
        tool_call("toolu_1", "Read"),
        tool_result("toolu_1", "b"),
        tools=READ,
    )
    ids = [
        block["id"] for message in payload["messages"] for block in message["content"] if block["type"] == "tool_use"
    ]
    assert len(set(ids)) == 2


def test_anthropic_tool_use_text_extra_inputs_are_not_permitted() -> None:
    sloppy = {"role": "assistant", "content": [{**USE["content"][0], "text": "x"}]}
    caught(
        "anthropic",
        claude(
            ASK,
            sloppy,
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
            tools=READ,
        ),
        "Extra inputs are not permitted",
    )
    call = {**call_part("toolu_1", "Read"), "text": "stray", "providerMetadata": {}}
    payload = accepted("anthropic", user("go"), tool_calls(call), tool_result("toolu_1", "x"), tools=READ)
    assert set(payload["messages"][1]["content"][0]) == {"type", "id", "name", "input"}


def test_anthropic_thinking_cache_control_extra_inputs_are_not_permitted() -> None:
    thinking = {"type": "thinking", "thinking": "t", "signature": "s", "cache_control": {"type": "ephemeral"}}
    caught(
        "anthropic",
        claude(ASK, {"role": "assistant", "content": [thinking, {"type": "text", "text": "a"}]}, ASK),
        "Extra inputs are not permitted",
    )
    payload = accepted("anthropic", user("q"), reasoning("t", answer="a"), user("ok"))
    assert set(payload["messages"][1]["content"][0]) == {"type", "thinking", "signature"}


# Gemini generateContent -----------------------------------------------------------------------------------


def gem(*contents: dict[str, Any]) -> dict[str, Any]:
    return {"contents": list(contents)}


ASK_G = {"role": "user", "parts": [{"text": "go"}]}
CALL_G = {"role": "model", "parts": [{"functionCall": {"name": "Read", "args": {}}, "thoughtSignature": "s"}]}
ANSWER_G = {"role": "user", "parts": [{"functionResponse": {"name": "Read", "response": {"output": "x"}}}]}


def test_gemini_function_call_turn_comes_immediately_after_a_user_turn_or_after_a_function_response_turn() -> None:
    caught("gemini", gem(CALL_G, ANSWER_G), "function call turn comes immediately after a user turn")
    payload = accepted("gemini", tool_call("c", "Read"), tool_result("c", "x"))
    assert payload["contents"][0]["role"] == "user"


def test_gemini_function_response_turn_comes_immediately_after_a_function_call_turn() -> None:
    caught(
        "gemini",
        gem(ASK_G, {"role": "model", "parts": [{"text": "ok"}]}, ANSWER_G),
        "function response turn comes immediately after",
    )
    payload = accepted("gemini", user("go"), assistant("ok"), tool_result("c", "x"), user("?"))
    assert all("functionResponse" not in part for content in payload["contents"] for part in content["parts"])


def test_gemini_number_of_function_response_parts_is_equal_to_the_number_of_function_call_parts() -> None:
    two_calls = {"role": "model", "parts": [CALL_G["parts"][0], {"functionCall": {"name": "Read", "args": {}}}]}
    caught("gemini", gem(ASK_G, two_calls, ANSWER_G), "number of function response parts is equal")
    payload = accepted(
        "gemini", user("go"), tool_calls(call_part("a", "Read"), call_part("b", "Read")), tool_result("a", "x")
    )
    responses = [part for part in payload["contents"][2]["parts"] if "functionResponse" in part]
    assert len(responses) == 2


def test_gemini_contents_parts_must_not_be_empty() -> None:
    caught("gemini", gem({"role": "user", "parts": []}), "contents.parts must not be empty")
    payload = accepted("gemini", user("hi"), assistant([text_part(" ")]), user("there"))
    assert all(content["parts"] for content in payload["contents"])


def test_gemini_function_call_is_missing_a_thought_signature_in_function_call_parts() -> None:
    unsigned = {"role": "model", "parts": [{"functionCall": {"name": "Read", "args": {}}}]}
    caught("gemini", gem(ASK_G, unsigned, ANSWER_G), "missing a thought_signature")
    payload = accepted("gemini", user("go"), tool_call("c", "Read"), tool_result("c", "x"))
    assert payload["contents"][1]["parts"][0]["thoughtSignature"] == "skip_thought_signature_validator"
    signed = call_part("c", "Read")
    signed["providerOptions"] = {"google": {"thoughtSignature": "real-sig"}}
    own = accepted("gemini", user("go"), tool_calls(signed), tool_result("c", "x"))
    assert own["contents"][1]["parts"][0]["thoughtSignature"] == "real-sig"


def test_gemini_history_must_not_end_on_a_model_turn() -> None:
    caught("gemini", gem(ASK_G, {"role": "model", "parts": [{"text": "a"}]}), "must not end on a model turn")
    payload = accepted("gemini", user("hi"), assistant("hello"))
    assert payload["contents"][-1]["role"] == "user"


def test_gemini_required_oneof_field_data_must_have_one_initialized_field() -> None:
    caught(
        "gemini",
        gem({"role": "user", "parts": [{"text": "a", "inlineData": {"mimeType": "image/png", "data": "x"}}]}),
        "one initialized field",
    )
    payload = accepted("gemini", user([text_part("look"), image_part()]))
    assert [sorted(part) for part in payload["contents"][0]["parts"]] == [["text"], ["inlineData"]]


# AI SDK ---------------------------------------------------------------------------------------------------


def test_ai_sdk_the_messages_do_not_match_the_model_message_schema(ai_sdk_preflight: Preflight) -> None:
    v4_shape = {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "extra": 1}]},
            {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": "v4"}]},
        ],
    }
    stored = raw(
        user("go"),
        tool_call("c", "Read"),
        tool_results({"type": "tool-result", "toolCallId": "c", "toolName": "Read", "result": "v4 shape"}),
    )
    payload = build_chat_request(stored, provider="ai-sdk", model="m").payload
    bad, good = ai_sdk_preflight([v4_shape, payload])
    assert bad["ok"] is False and "ModelMessage[] schema" in bad["message"]
    assert good == {"ok": True}


def test_ai_sdk_missing_tool_results_error(ai_sdk_preflight: Preflight) -> None:
    orphan_call = {
        "model": "m",
        "messages": [
            {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c9", "toolName": "t", "input": {}}]}
        ],
    }
    payload = accepted("ai-sdk", user("go"), tool_call("c9", "Read"))
    bad, good = ai_sdk_preflight([orphan_call, payload])
    assert bad["name"] == "AI_MissingToolResultsError"
    assert good == {"ok": True}


def test_ai_sdk_messages_must_not_be_empty(ai_sdk_preflight: Preflight) -> None:
    payload = accepted("ai-sdk", system("only instructions"))
    bad, good = ai_sdk_preflight([{"model": "m", "messages": []}, payload])
    assert "messages must not be empty" in bad["message"]
    assert good == {"ok": True}
