"""``settle`` hands a conversation that already keeps its promises back as it is, without the repairing passes,
and runs them on any other only from the turn where the first repair may be needed.

Pinned here: this gives exactly what the repairing passes over the whole conversation give (messages, system
text, repairs), on random histories, on their settled forms (where the passes are skipped) and on settled
forms going on with random turns; and each broken promise sends the conversation through the passes. And
within the passes, a message whose parts are clean as they are is what cleaning it part by part gives.
"""

from collections.abc import Callable
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.persisted import PersistedMessage
from app.projections.types import Repair
from app.providers import conversation
from app.providers.conversation import CONTINUE, Settled, settle
from app.providers.serializer import to_chat_messages
from tests.builders import SIGNATURE, call_part, reasoning_part, result_part, text_part
from tests.providers.projected import raw
from tests.strategies import histories

Chat = list[dict[str, Any]]
A = result_part("c1", "A", tool_name="Read")
B = result_part("c2", "B", tool_name="Grep")


def generally(chat: Chat) -> tuple[Settled, list[Repair]]:
    """``settle`` vouching for no message: the repairing passes run over the whole conversation."""
    with patch.object(conversation, "_settled_prefix", return_value=0):
        return settle(chat)  # type: ignore[arg-type]


def assert_paths_agree(chat: Chat) -> None:
    result, repairs = settle(chat)  # type: ignore[arg-type]
    expected, expected_repairs = generally(chat)
    assert result.system == expected.system
    assert result.messages == expected.messages
    assert repairs == expected_repairs


def chat_of(history: list[PersistedMessage]) -> Chat:
    chat, _ = to_chat_messages(raw(*history))
    return chat  # type: ignore[return-value]


def settled_form(chat: Chat) -> Chat:
    """What ``settle`` made of ``chat``, as a conversation again: it keeps its promises, so settling it
    again mostly takes the fast path."""
    result, _ = settle(chat)  # type: ignore[arg-type]
    return ([{"role": "system", "content": result.system}] if result.system else []) + result.messages


@settings(max_examples=150)
@given(history=histories(), tail=histories(max_steps=6))
def test_settle_gives_what_repairing_the_whole_conversation_gives(
    history: list[PersistedMessage], tail: list[PersistedMessage]
) -> None:
    chat = [{"role": "system", "content": "Be brief."}, *chat_of(history)]
    assert_paths_agree(chat)
    assert_paths_agree(settled_form(chat))
    # A settled conversation going on with anything (ids reused, results missing or late): repairs run only
    # from the last turn that kept its promises, and must reach the same result.
    assert_paths_agree(settled_form(chat) + chat_of(tail))
    assert_paths_agree(settled_form(chat) + settled_form(chat_of(tail)))


_ROUGH_PARTS = st.sampled_from(
    [
        text_part(" \n"),
        text_part(""),
        reasoning_part(""),
        reasoning_part("", signature=SIGNATURE),
        {**call_part("c7", "Read"), "input": '{"path": "a"}'},
        {**call_part("c7", "Read"), "input": "not json"},
        {**call_part("c7", "Read"), "input": None},
        {**call_part("c7", "Read"), "input": [1]},
        call_part("c7", " "),
        result_part("c7", " "),
        result_part("c7", 7),
        result_part("c7", output={"type": "json"}),
        result_part("c7", output={"type": "content", "value": [text_part(" ")]}),
        result_part("c7", output={"type": "v4"}),
        {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c7"},
        {"type": "tool-approval-response", "approvalId": "a1", "approved": False},
    ]
)


@st.composite
def messages_to_clean(draw: st.DrawFn) -> dict[str, Any]:
    """A message of a random history, its parts now and then joined by one no provider takes as it is."""
    chat = [m for m in chat_of(draw(histories())) if m["role"] != "system"]
    message = draw(st.sampled_from(chat)) if chat else {"role": "user", "content": [text_part("go")]}
    content = list(message["content"])
    if draw(st.booleans()):
        content.insert(draw(st.integers(0, len(content))), draw(_ROUGH_PARTS))
    return {**message, "content": content}


@settings(max_examples=300)
@given(message=messages_to_clean())
def test_a_message_clean_as_it_is_is_what_cleaning_it_part_by_part_gives(message: dict[str, Any]) -> None:
    fast_repairs: list[Repair] = []
    general_repairs: list[Repair] = []
    fast = conversation._clean(message, fast_repairs)
    with patch.object(conversation, "_clean_as_is", return_value=False):
        general = conversation._clean(message, general_repairs)
    assert (fast, fast_repairs) == (general, general_repairs)


def settled_chat() -> Chat:
    """A conversation that keeps every promise: reasoning, text and two calls answered in order, a note."""
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [text_part("read a and grep b")]},
        {
            "role": "assistant",
            "content": [
                reasoning_part("", signature=SIGNATURE),
                text_part("reading"),
                call_part("c1", "Read", {"path": "a"}),
                call_part("c2", "Grep", {"pattern": "b"}),
            ],
        },
        {"role": "tool", "content": [A, B]},
        {"role": "system", "content": "Remember the plan."},
        {"role": "assistant", "content": [reasoning_part("so", signature=SIGNATURE), text_part("done")]},
        {"role": "user", "content": [text_part("thanks")]},
    ]


def test_a_settled_conversation_comes_back_as_it_is() -> None:
    chat = settled_chat()
    with patch.object(conversation, "_repaired", wraps=conversation._repaired) as general:
        result, repairs = settle(chat)  # type: ignore[arg-type]
    assert not general.called
    assert repairs == []
    assert result.system == "Be brief."
    assert all(got is given for got, given in zip(result.messages, chat[1:], strict=True))


def test_ending_on_an_assistant_turn_is_repaired_on_the_fast_path_too() -> None:
    chat = settled_chat()[:-1]
    with patch.object(conversation, "_repaired", wraps=conversation._repaired) as general:
        result, repairs = settle(chat)  # type: ignore[arg-type]
    assert not general.called
    assert [repair.rule for repair in repairs] == ["ends-on-assistant"]
    assert result.messages == [*chat[1:], {"role": "user", "content": [text_part(CONTINUE)]}]
    assert_paths_agree(chat)


def test_a_broken_promise_in_the_last_turn_is_repaired_from_that_turn_on() -> None:
    chat = [*settled_chat(), {"role": "assistant", "content": [call_part("c1", "Read")]}]
    with patch.object(conversation, "_repaired", wraps=conversation._repaired) as general:
        result, repairs = settle(chat)  # type: ignore[arg-type]
    assert general.call_args.args[0] == chat[-1:]
    # The earlier turns' call ids were known to the repairs all the same: the reused id is renamed.
    assert [repair.rule for repair in repairs] == ["duplicate-tool-call-id", "interrupted-tool-call"]
    assert result.messages[-2]["content"] == [{**call_part("c1", "Read"), "toolCallId": "c1_2"}]
    assert_paths_agree(chat)


def _set(index: int, **fields: Any) -> Callable[[Chat], None]:
    def change(chat: Chat) -> None:
        chat[index] = {**chat[index], **fields}

    return change


def _set_part(index: int, part: int, **fields: Any) -> Callable[[Chat], None]:
    def change(chat: Chat) -> None:
        content = list(chat[index]["content"])
        content[part] = {**content[part], **fields}
        chat[index] = {**chat[index], "content": content}

    return change


def _insert(index: int, *messages: dict[str, Any]) -> Callable[[Chat], None]:
    def change(chat: Chat) -> None:
        chat[index:index] = messages

    return change


def _results(*parts: dict[str, Any]) -> Callable[[Chat], None]:
    return _set(3, content=list(parts))


def _both(*changes: Callable[[Chat], None]) -> Callable[[Chat], None]:
    def change(chat: Chat) -> None:
        for each in changes:
            each(chat)

    return change


def _no_results(chat: Chat) -> None:
    del chat[3]


def _split_results(chat: Chat) -> None:
    chat[3:4] = [{"role": "tool", "content": [A]}, {"role": "tool", "content": [B]}]


APPROVAL = {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"}
END = len(settled_chat())

BROKEN_PROMISES: dict[str, tuple[Callable[[Chat], None], str | None]] = {
    "whitespace-only text": (_set_part(1, 0, text=" \n"), "empty-text"),
    "empty unsigned reasoning": (_set_part(5, 0, text="", providerOptions={}), "empty-reasoning"),
    "a message without content": (_set(6, content=[]), "empty-message"),
    "a blank system note": (_set(4, content="  "), "empty-message"),
    "two assistant messages in a row": (
        _insert(6, {"role": "assistant", "content": [text_part("more")]}),
        "merged-assistant-turns",
    ),
    "a turn that only thinks": (_set(5, content=[reasoning_part("so", signature=SIGNATURE)]), "reasoning-only-turn"),
    "a message between a call and its result": (
        _insert(3, {"role": "user", "content": [text_part("hurry")]}),
        "moved-after-tool-results",
    ),
    "a note between a call and its result": (
        _insert(3, {"role": "system", "content": "note"}),
        "moved-after-tool-results",
    ),
    "calls never answered": (_no_results, "interrupted-tool-call"),
    "results in a user message": (_set(3, role="user"), "interrupted-tool-call"),
    "a call left without its result": (_results(A), "interrupted-tool-call"),
    "a result for no call in the turn": (_results(A, B, result_part("c9", "?")), "orphan-tool-result"),
    "a second result for a call": (_results(A, B, A), "duplicate-tool-result"),
    "a result under another call's id": (_results(A, {**B, "toolCallId": "c1"}), "duplicate-tool-result"),
    "a result under another tool's name": (_results(A, {**B, "toolName": "Read"}), "tool-result-name"),
    "a blank result": (_results(A, {**B, "output": {"type": "text", "value": " "}}), "empty-tool-result"),
    "a tool message answering nothing": (
        _insert(2, {"role": "tool", "content": [result_part("c0", "?")]}),
        "orphan-tool-result",
    ),
    "a reused call id": (
        _insert(
            END,
            {"role": "assistant", "content": [call_part("c1", "Read")]},
            {"role": "tool", "content": [A]},
            {"role": "user", "content": [text_part("ok")]},
        ),
        "duplicate-tool-call-id",
    ),
    "an empty call id": (
        _both(_set_part(2, 2, toolCallId=""), _results({**A, "toolCallId": ""}, B)),
        "duplicate-tool-call-id",
    ),
    "a string input": (_set_part(2, 2, input='{"path": "a"}'), "tool-input-string"),
    "a non-object input": (_set_part(2, 2, input=[1]), "tool-input-object"),
    "a blank tool name": (_set_part(2, 2, toolName=" "), "tool-name-empty"),
    "an approval part": (_set(2, content=[*settled_chat()[2]["content"], APPROVAL]), "approval-folded"),
    "calls in the last message": (
        _insert(END, {"role": "assistant", "content": [call_part("c3", "Read")]}),
        "interrupted-tool-call",
    ),
    # Repaired without a report: what comes out is still not what went in.
    "results out of call order": (_results(B, A), None),
    "results split over two tool messages": (_split_results, None),
    "a tool message with more than role and content": (_set(3, providerOptions={"openai": {}}), None),
}


@pytest.mark.parametrize("broken", BROKEN_PROMISES)
def test_each_broken_promise_takes_the_repairing_passes(broken: str) -> None:
    change, rule = BROKEN_PROMISES[broken]
    chat = settled_chat()
    change(chat)
    with patch.object(conversation, "_repaired", wraps=conversation._repaired) as general:
        result, repairs = settle(chat)  # type: ignore[arg-type]
    assert general.called
    if rule is None:
        assert result.messages != chat[1:]
    else:
        assert rule in [repair.rule for repair in repairs]
    assert_paths_agree(chat)
