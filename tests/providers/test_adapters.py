"""What each adapter does that the regression tests do not already pin: media, system notes, reasoning items."""

from typing import Any

import pytest

from app.engine.persisted import PersistedMessage
from app.providers.chat_request import build_chat_request
from app.providers.conversation import Settled, UnsettledMessage
from app.providers.registry import ADAPTERS, SUPPORTED_PROVIDERS
from tests.builders import (
    assistant,
    call_part,
    file_part,
    image_part,
    media_item,
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
from tests.providers.payload_check import problems
from tests.providers.projected import raw

SCREENSHOT = result_part("c", [{"type": "text", "text": "shot"}, media_item()], output_type="content")


def payload(provider: str, *messages: PersistedMessage, model: str = "m", **options: Any) -> dict[str, Any]:
    built = build_chat_request(raw(*messages), provider=provider, model=model, **options).payload
    assert problems(provider, built, model=model) == []
    return built


def test_openai_pdf_is_a_file_part_and_other_files_are_explicit_text() -> None:
    content = payload("openai", user([text_part("read"), file_part(), file_part("AAAA", "application/zip", "a.zip")]))
    parts = content["messages"][0]["content"]
    assert parts[1] == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "report.pdf"},
    }
    assert parts[2]["type"] == "text" and "Cannot read a.zip (application/zip)" in parts[2]["text"]


def test_openai_later_system_note_stays_a_system_message() -> None:
    messages = payload("openai", user("hi"), system("note"), user("more"))["messages"]
    assert messages[1] == {"role": "system", "content": "note"}


def test_openai_assistant_media_moves_to_a_user_message() -> None:
    messages = payload("openai", user("draw"), assistant([text_part("here"), image_part()]), user("nice"))["messages"]
    assert messages[1] == {"role": "assistant", "content": "here"}
    assert messages[2]["role"] == "user" and messages[2]["content"][1]["type"] == "image_url"


PNG_BYTES = "iVBORw0KGgoAAAANSUhEUg=="
BMP_BYTES = "Qk0eAAAAAAAAABoAAAAMAAAA"


@pytest.mark.parametrize("provider", SUPPORTED_PROVIDERS)
def test_an_image_is_sent_as_what_its_bytes_are_not_as_what_it_was_labelled(provider: str) -> None:
    built = payload(provider, user([text_part("see"), image_part(PNG_BYTES, media_type="image/jpeg")]))
    assert "image/png" in str(built)
    assert "image/jpeg" not in str(built)


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic", "gemini"])
@pytest.mark.parametrize(
    ("data", "media_type"), [(BMP_BYTES, None), (BMP_BYTES, "image/png"), ("PHN2Zz4=", "image/svg+xml")]
)
def test_an_image_type_the_provider_cannot_read_is_named_in_text(
    provider: str, data: str, media_type: str | None
) -> None:
    built = payload(provider, user([text_part("see"), image_part(data, media_type=media_type)]))
    assert "Cannot read" in str(built)
    assert data not in str(built)


@pytest.mark.parametrize("provider", ["gemini", "ai-sdk"])
def test_a_text_file_that_begins_like_a_signature_keeps_its_label(provider: str) -> None:
    cars = "Qk1XIGNhcnM="  # "BMW cars": the letters a bitmap begins with
    built = payload(provider, user([text_part("read"), file_part(cars, "text/plain", "cars.txt")]))
    assert "text/plain" in str(built)
    assert "image/bmp" not in str(built)


def test_anthropic_keeps_tool_result_images_inside_the_result() -> None:
    messages = payload("anthropic", user("go"), tool_call("c", "Read"), tool_results(SCREENSHOT))["messages"]
    result = messages[2]["content"][0]
    assert [block["type"] for block in result["content"]] == ["text", "image"]
    assert result["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def test_anthropic_url_image_uses_a_url_source() -> None:
    url = "https://example.com/cat.jpg"
    block = payload("anthropic", user([text_part("see"), image_part(url, media_type=None)]))["messages"][0]["content"][
        1
    ]
    assert block == {"type": "image", "source": {"type": "url", "url": url}}


def test_anthropic_later_system_note_is_wrapped_user_text() -> None:
    messages = payload("anthropic", user("hi"), assistant("yo"), system("Mind the tests."), user("go"))["messages"]
    assert messages[2]["content"][0] == {
        "type": "text",
        "text": "<system-reminder>\nMind the tests.\n</system-reminder>",
    }


def test_anthropic_history_with_calls_and_no_tools_gets_a_placeholder_tool() -> None:
    built = payload("anthropic", user("go"), tool_call("c", "Read"), tool_result("c", "x"))
    assert [tool["name"] for tool in built["tools"]] == ["no_tools_available"]


def test_anthropic_redacted_thinking_is_replayed_as_is() -> None:
    redacted = reasoning_part("")
    redacted["providerOptions"] = {"anthropic": {"redactedData": "opaque=="}}
    messages = payload("anthropic", user("q"), assistant([redacted, text_part("a")]), user("ok"))["messages"]
    assert messages[1]["content"][0] == {"type": "redacted_thinking", "data": "opaque=="}


def test_gemini_system_goes_in_system_instruction() -> None:
    built = payload("gemini", user("hi"), system="Be brief.")
    assert built["systemInstruction"] == {"parts": [{"text": "Be brief."}]}


def test_gemini_tool_result_media_follow_the_function_responses() -> None:
    contents = payload("gemini", user("go"), tool_call("c", "Read"), tool_results(SCREENSHOT), model="gemini-2.5-pro")[
        "contents"
    ]
    parts = contents[2]["parts"]
    assert parts[0]["functionResponse"]["response"] == {"output": "shot\n[attached: attachment (image/png)]"}
    assert parts[1] == {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}


def test_gemini_error_results_go_under_error() -> None:
    contents = payload(
        "gemini", user("go"), tool_call("c", "Read"), tool_result("c", "boom", output_type="error-text")
    )["contents"]
    assert contents[2]["parts"][0]["functionResponse"]["response"] == {"error": "boom"}


def test_gemini_signed_thought_is_replayed_and_older_models_get_no_sentinel() -> None:
    thought = reasoning_part("plan", signature="Z3NpZw==", provider="google")
    contents = payload(
        "gemini", user("q"), tool_calls(thought, call_part("c", "Read")), tool_result("c", "x"), model="gemini-2.5-pro"
    )["contents"]
    assert contents[1]["parts"][0] == {"text": "plan", "thought": True, "thoughtSignature": "Z3NpZw=="}
    assert "thoughtSignature" not in contents[1]["parts"][1]


def test_responses_system_prompt_is_instructions() -> None:
    built = payload("openai-responses", user("hi"), system="Be brief.")
    assert built["instructions"] == "Be brief."


def test_responses_tool_output_keeps_its_images() -> None:
    items = payload("openai-responses", user("go"), tool_call("c", "Read"), tool_results(SCREENSHOT))["input"]
    assert items[2]["output"] == [
        {"type": "input_text", "text": "shot"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"},
    ]


def test_responses_reasoning_item_goes_before_the_call_it_produced() -> None:
    thought = reasoning_part("plan")
    thought["providerOptions"] = {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "enc"}}
    items = payload("openai-responses", user("go"), tool_calls(thought, call_part("c", "Read")), tool_result("c", "x"))[
        "input"
    ]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "plan"}],
        "encrypted_content": "enc",
    }
    assert items[2]["type"] == "function_call"


def test_ai_sdk_system_is_the_system_option_and_later_notes_are_user_text() -> None:
    built = payload("ai-sdk", system("lead"), user("hi"), system("later"), user("go"), system="Be brief.")
    assert built["system"] == "Be brief.\n\nlead"
    assert built["messages"][1] == {
        "role": "user",
        "content": [{"type": "text", "text": "<system-reminder>\nlater\n</system-reminder>"}],
    }


def test_ai_sdk_denied_call_is_error_text_valid_on_v5_and_v6() -> None:
    denied = result_part("c", output={"type": "execution-denied", "reason": "no"})
    messages = payload("ai-sdk", user("go"), tool_call("c", "Bash"), tool_results(denied))["messages"]
    assert messages[2]["content"][0]["output"] == {
        "type": "error-text",
        "value": "The user denied this tool call. Reason: no",
    }


def test_ai_sdk_url_media_in_tool_output_is_named_in_text() -> None:
    url_image = result_part("c", [{"type": "image-url", "url": "https://x.test/a.png"}], output_type="content")
    messages = payload("ai-sdk", user("go"), tool_call("c", "Read"), tool_results(url_image))["messages"]
    assert messages[2]["content"][0]["output"] == {
        "type": "content",
        "value": [{"type": "text", "text": "[attached: https://x.test/a.png (image/png)]"}],
    }


def test_gemini_signature_that_is_not_base64_is_not_sent() -> None:
    thought = reasoning_part("plan", signature="g-sig", provider="google")
    call = call_part("c", "Read")
    call["providerOptions"] = {"google": {"thoughtSignature": "not base64!"}}
    built = build_chat_request(
        raw(user("q"), tool_calls(thought, call), tool_result("c", "x")), provider="gemini", model="gemini-3-pro"
    )
    parts = built.payload["contents"][1]["parts"]
    assert parts == [
        {
            "functionCall": {"name": "Read", "args": {}, "id": "c"},
            "thoughtSignature": "skip_thought_signature_validator",
        }
    ]
    assert "thought-signature-invalid" in [repair.rule for repair in built.diagnostics.repairs]


def test_anthropic_image_over_5_mb_is_named_in_text() -> None:
    huge = image_part("iVBORw0KGgo" + "A" * (7 * 1024 * 1024))
    blocks = payload("anthropic", user([text_part("look"), huge]))["messages"][0]["content"]
    assert blocks[1]["type"] == "text" and "over Anthropic's 5 MB limit" in blocks[1]["text"]


UNKNOWN = {"type": "hologram", "text": "?"}
UNSETTLED = {
    "a message of an unknown role": {"role": "developer", "content": [text_part("hi")]},
    "an unknown user part": {"role": "user", "content": [UNKNOWN]},
    "an unknown assistant part": {"role": "assistant", "content": [text_part("a"), UNKNOWN]},
    "an unknown tool output": {
        "role": "tool",
        "content": [result_part("c1", output={"type": "v4-result", "value": "x"})],
    },
}
"""What settle never lets through: each adapter that dispatches on it must refuse it, not drop it silently."""
PASSED_THROUGH = {("ai-sdk", "an unknown user part"), ("ai-sdk", "an unknown assistant part")}
"""The ai-sdk target copies user and assistant parts without dispatching on them."""


@pytest.mark.parametrize(
    ("provider", "what"),
    [
        (provider, what)
        for provider in SUPPORTED_PROVIDERS
        for what in UNSETTLED
        if (provider, what) not in PASSED_THROUGH
    ],
)
def test_an_adapter_refuses_what_settle_never_lets_through(provider: str, what: str) -> None:
    calls = [{"role": "assistant", "content": [call_part("c1", "Read")]}] if what == "an unknown tool output" else []
    settled = Settled(None, [{"role": "user", "content": [text_part("go")]}, *calls, UNSETTLED[what]])
    with pytest.raises(UnsettledMessage):
        ADAPTERS[provider](settled, model="m", tools=(), max_output_tokens=None)
