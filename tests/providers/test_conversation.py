from typing import Any

from app.providers.conversation import CONTINUE, INTERRUPTED, NO_OUTPUT, settle
from app.providers.serializer import to_chat_messages
from tests.builders import (
    approval_request,
    approval_response,
    assistant,
    call_part,
    reasoning,
    result_part,
    system,
    text_part,
    tool_call,
    tool_calls,
    tool_result,
    tool_results,
    user,
)
from tests.providers.projected import raw


def settled(*messages: Any) -> tuple[list[dict[str, Any]], list[str]]:
    chat, _ = to_chat_messages(raw(*messages))
    result, repairs = settle(chat)
    return result.messages, [repair.rule for repair in repairs]


def test_interrupted_call_gets_an_error_result_right_after_it() -> None:
    messages, rules = settled(user("go"), tool_call("c1", "Read"), user("and?"))
    assert messages[2] == {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "Read",
                "output": {"type": "error-text", "value": INTERRUPTED},
            }
        ],
    }
    assert messages[3]["role"] == "user"
    assert "interrupted-tool-call" in rules


def test_orphan_result_is_dropped() -> None:
    messages, rules = settled(user("go"), tool_result("ghost", "boo"))
    assert [message["role"] for message in messages] == ["user"]
    assert rules == ["orphan-tool-result"]


def test_second_result_for_one_call_is_dropped() -> None:
    messages, rules = settled(user("go"), tool_call("c1", "Read"), tool_result("c1", "one"), tool_result("c1", "two"))
    assert messages[2]["content"][0]["output"] == {"type": "text", "value": "one"}
    assert len(messages[2]["content"]) == 1
    assert "duplicate-tool-result" in rules


def test_user_text_between_a_call_and_its_result_moves_after_the_result() -> None:
    messages, rules = settled(user("go"), tool_call("c1", "Read"), user("hurry"), tool_result("c1", "done"))
    assert [message["role"] for message in messages] == ["user", "assistant", "tool", "user"]
    assert "moved-after-tool-results" in rules


def test_results_split_over_messages_are_one_tool_message_in_call_order() -> None:
    messages, _ = settled(
        user("go"),
        tool_calls(call_part("a", "Read"), call_part("b", "Grep")),
        tool_result("b", "B", tool_name="Grep"),
        tool_result("a", "A"),
    )
    assert [part["toolCallId"] for part in messages[2]["content"]] == ["a", "b"]


def test_reused_call_id_is_renamed_for_the_later_call_and_its_result() -> None:
    messages, rules = settled(
        user("go"),
        tool_call("c1", "Read"),
        tool_result("c1", "first"),
        tool_call("c1", "Read"),
        tool_result("c1", "second"),
    )
    assert messages[3]["content"][0]["toolCallId"] == "c1_2"
    assert messages[4]["content"][0] == {**messages[4]["content"][0], "toolCallId": "c1_2"}
    assert messages[4]["content"][0]["output"]["value"] == "second"
    assert "duplicate-tool-call-id" in rules


def test_denied_approval_without_result_says_the_user_denied_it() -> None:
    messages, rules = settled(
        user("go"),
        tool_calls(call_part("c1", "Bash")),
        approval_request("a1", "c1"),
        approval_response("a1", approved=False, reason="too risky"),
    )
    assert messages[1]["content"] == [{"type": "tool-call", "toolCallId": "c1", "toolName": "Bash", "input": {}}]
    assert messages[2]["content"][0]["output"] == {"type": "execution-denied", "reason": "too risky"}
    assert "denied-tool-call" in rules


def test_an_approval_asked_after_a_later_turn_began_decides_nothing() -> None:
    messages, rules = settled(
        user("go"),
        tool_calls(call_part("c1", "Bash")),
        user("never mind"),
        approval_request("a1", "c1"),
        approval_response("a1", approved=False, reason="too risky"),
    )
    # The interrupted call's result was sent before the late approval came: it stays as it was.
    assert messages[2]["content"][0]["output"] == {"type": "error-text", "value": INTERRUPTED}
    assert "denied-tool-call" not in rules


def test_empty_and_whitespace_texts_and_the_messages_they_empty_are_dropped() -> None:
    messages, rules = settled(user([text_part(" "), text_part("hi")]), user("\n\t"), assistant("ok"), user("next"))
    assert messages[0]["content"] == [{"type": "text", "text": "hi"}]
    assert [message["role"] for message in messages] == ["user", "assistant", "user"]
    assert rules.count("empty-text") == 2
    assert "empty-message" in rules


def test_empty_tool_output_becomes_no_output() -> None:
    messages, rules = settled(user("go"), tool_call("c1", "Bash"), tool_result("c1", "  "))
    assert messages[2]["content"][0]["output"] == {"type": "text", "value": NO_OUTPUT}
    assert "empty-tool-result" in rules


def test_consecutive_assistant_messages_are_one_turn() -> None:
    messages, rules = settled(user("go"), assistant("looking"), tool_call("c1", "Read"), tool_result("c1", "x"))
    assert [part["type"] for part in messages[1]["content"]] == ["text", "tool-call"]
    assert "merged-assistant-turns" in rules


def test_string_tool_input_is_parsed_and_other_inputs_wrapped() -> None:
    messages, rules = settled(
        user("go"),
        tool_calls({"type": "tool-call", "toolCallId": "a", "toolName": "Read", "input": '{"path": "x"}'}),
        tool_calls({"type": "tool-call", "toolCallId": "b", "toolName": "Read", "input": [1]}),
    )
    calls = [part for part in messages[1]["content"] if part["type"] == "tool-call"]
    assert [call["input"] for call in calls] == [{"path": "x"}, {"input": [1]}]
    assert "tool-input-string" in rules and "tool-input-object" in rules


def test_ending_on_assistant_adds_a_continue_turn() -> None:
    messages, rules = settled(user("hi"), assistant("hello"))
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": CONTINUE}]}
    assert "ends-on-assistant" in rules


def test_only_system_text_still_gives_a_user_turn() -> None:
    chat, _ = to_chat_messages(raw(system("rules")))
    result, repairs = settle(chat)
    assert result.system == "rules"
    assert result.messages == [{"role": "user", "content": [{"type": "text", "text": CONTINUE}]}]
    assert repairs[-1].rule == "no-conversation"


def test_signed_reasoning_is_never_edited() -> None:
    messages, _ = settled(user("q"), reasoning("deep thought", answer="42"), user("ok"))
    assert messages[1]["content"][0] == {
        "type": "reasoning",
        "text": "deep thought",
        "providerOptions": {"anthropic": {"signature": "sig-abc"}},
    }


def test_result_named_after_a_different_tool_takes_the_calls_name() -> None:
    messages, rules = settled(
        user("go"), tool_call("c1", "Read"), tool_results(result_part("c1", "x", tool_name="Grep"))
    )
    assert messages[2]["content"][0]["toolName"] == "Read"
    assert "tool-result-name" in rules


def test_a_turn_that_only_thought_is_dropped() -> None:
    messages, rules = settled(user("q"), reasoning("hmm, let me"), user("still there?"))
    assert [message["role"] for message in messages] == ["user", "user"]
    assert "reasoning-only-turn" in rules


def test_keys_a_tool_message_loses_when_rebuilt_from_its_results_are_reported() -> None:
    conversation = [
        {"role": "user", "content": [text_part("go")]},
        {"role": "assistant", "content": [call_part("c1", "Read")]},
        {"role": "tool", "content": [result_part("c1", "ok")], "providerOptions": {"x": {"cache": True}}},
    ]
    result, repairs = settle(conversation)  # type: ignore[arg-type]
    assert result.messages[2] == {"role": "tool", "content": [result_part("c1", "ok")]}
    assert [(repair.rule, repair.detail) for repair in repairs] == [
        ("tool-message-keys", "dropped providerOptions of a tool message")
    ]


def test_results_split_over_tool_messages_and_out_of_order_are_joined_in_call_order_without_a_repair() -> None:
    conversation = [
        {"role": "user", "content": [text_part("go")]},
        {"role": "assistant", "content": [call_part("c1", "Read"), call_part("c2", "Read")]},
        {"role": "tool", "content": [result_part("c2", "two")]},
        {"role": "tool", "content": [result_part("c1", "one")]},
        {"role": "user", "content": [text_part("next")]},
    ]
    result, repairs = settle(conversation)  # type: ignore[arg-type]
    assert result.messages[2] == {"role": "tool", "content": [result_part("c1", "one"), result_part("c2", "two")]}
    assert repairs == []
