"""The Anthropic adapter's shortcuts give what its general paths give, and it never edits what it is given.

The shortcuts: a text-then-calls turn built in one pass, text results built without reading the output in
general, and tool ids checked all at once and mapped only when one does not fit.

The histories here skip ``settle`` on purpose: the adapter's output must not depend on which of its paths ran
for any input, not only for a settled one. Tool-call ids come from a pool that fits, does not fit, and clashes
(an id equal to the hash another id is mapped to).
"""

import copy
from typing import Any
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from app.projections.types import Repair
from app.providers import anthropic
from app.providers.anthropic import _assistant_blocks, _ordered_assistant_blocks, to_anthropic
from app.providers.conversation import Settled
from app.providers.media import Media
from app.providers.tool_ids import ToolIdMap
from tests.builders import SIGNATURE, call_part, file_part, reasoning_part, result_part, text_part

CLASH = ToolIdMap(64, "anthropic")("a.b")
"""What ``a.b`` is sent as: an id spelled so must be mapped again when it comes after ``a.b``."""
call_ids = st.sampled_from(["call_1", "call_2", "toolu_01AbC-d", "a.b", CLASH, "functions.Read:0", "x" * 70, "", "ü"])
redacted = {"type": "reasoning", "text": "", "providerOptions": {"anthropic": {"redactedData": "opaque=="}}}
assistant_parts = st.one_of(
    st.sampled_from(
        [
            text_part("ok"),
            text_part("done", providerOptions={"openai": {"itemId": "m1"}}),
            reasoning_part("plan", signature=SIGNATURE),
            reasoning_part("plan"),
            redacted,
            file_part(),
            file_part("iVBORw0KGgo=", "image/png", None),
        ]
    ),
    call_ids.map(lambda call_id: call_part(call_id, "Read", {"path": "a.py"})),
)
"""Mostly text and calls (the shortcut's turn), often with what only the general path takes."""
result_parts = st.one_of(
    st.tuples(call_ids, st.sampled_from(["text", "error-text"]), st.sampled_from(["out", "", " ", "a\nb"])).map(
        lambda drawn: result_part(drawn[0], drawn[2], output_type=drawn[1])
    ),
    call_ids.map(lambda call_id: result_part(call_id, output={"type": "json", "value": {"ok": True}})),
)
messages = st.one_of(
    st.lists(assistant_parts, max_size=4).map(lambda parts: {"role": "assistant", "content": parts}),
    st.lists(result_parts, min_size=1, max_size=3).map(lambda parts: {"role": "tool", "content": parts}),
    st.just(0).map(lambda _: {"role": "user", "content": [text_part("go")]}),
    st.just(0).map(lambda _: {"role": "system", "content": "Mind the tests."}),
)
conversations = st.lists(messages, max_size=12).map(lambda listed: Settled("Be brief.", listed))


def _build(settled: Settled) -> tuple[dict[str, Any], list[Repair]]:
    return to_anthropic(settled, model="claude-sonnet-4-5", tools=(), max_output_tokens=None)


SEARCHED = [
    {**call_part("srvtoolu_1", "web_search", {"query": "x"}), "providerExecuted": True},
    {
        **result_part("srvtoolu_1", tool_name="web_search", output={"type": "json", "value": []}),
        "providerExecuted": True,
    },
]
"""A web search Anthropic ran, as settle hands it on: the call, then its result, in the turn."""


@given(parts=st.lists(assistant_parts, max_size=5), searched_at=st.none() | st.integers(0, 5))
def test_a_text_then_calls_turn_takes_the_blocks_the_general_path_gives(
    parts: list[dict[str, Any]], searched_at: int | None
) -> None:
    if searched_at is not None:
        parts = [*parts[:searched_at], *SEARCHED, *parts[searched_at:]]
    before = copy.deepcopy(parts)
    fast_ids: list[str] = []
    fast_media: list[Media] = []
    fast_repairs: list[Repair] = []
    general_ids: list[str] = []
    general_media: list[Media] = []
    general_repairs: list[Repair] = []
    fast = _assistant_blocks(parts, fast_ids, fast_media, fast_repairs)
    general = _ordered_assistant_blocks(parts, general_ids, general_media, general_repairs)
    assert (fast, fast_media, fast_repairs) == (general, general_media, general_repairs)
    assert set(fast_ids) == set(general_ids)
    assert parts == before


@given(settled=conversations)
def test_text_results_are_the_blocks_reading_the_output_gives(settled: Settled) -> None:
    with patch.object(anthropic, "_text_result", return_value=None):
        general = _build(settled)
    assert _build(settled) == general


@given(settled=conversations)
def test_tool_ids_are_what_one_map_gives_them_in_history_order(settled: Settled) -> None:
    """Ids are checked in bulk and mapped only when one does not fit; the result is the same as mapping each
    call and result id with one ``ToolIdMap`` as the history gives them."""
    expected = ToolIdMap(64, "anthropic")
    mapped = [
        expected(part["toolCallId"])
        for message in settled.messages
        if message["role"] in ("assistant", "tool")
        for part in message["content"]
        if part["type"] in ("tool-call", "tool-result")
    ]
    payload, repairs = _build(settled)
    sent = [
        block["id"] if block["type"] == "tool_use" else block["tool_use_id"]
        for turn in payload["messages"]
        for block in turn["content"]
        if block["type"] in ("tool_use", "tool_result")
    ]
    assert sent == mapped
    assert [repair for repair in repairs if repair.rule == "tool-call-id"] == expected.repairs()


@given(settled=conversations)
def test_building_a_payload_never_changes_the_messages_it_reads(settled: Settled) -> None:
    before = copy.deepcopy(settled)
    first = _build(settled)
    assert settled == before
    assert _build(settled) == first
