from typing import Any

import orjson
import pytest

from app.projections.types import Diagnostics, ProjectedMessage, Projection, View
from app.providers.chat_request import build_chat_request
from app.providers.errors import InvalidMutation, MutationTargetNotFound
from app.providers.mutations import MUTATION_NOTE, apply_mutations, parse_mutations
from tests.builders import assistant, text_part, tool_call, tool_result, user
from tests.providers.projected import raw

HISTORY = raw(user("first", id="u1"), assistant("reply", id="a1"), user("second", id="u2"))


def apply(*mutations: dict[str, Any]) -> tuple[list[ProjectedMessage], list[str]]:
    messages, notes, _ = apply_mutations(HISTORY, parse_mutations(list(mutations)))
    return messages, notes


def test_append_adds_a_message_that_names_no_stored_message() -> None:
    messages, notes = apply({"op": "append", "role": "user", "parts": [text_part("also this")]})
    added = messages[-1]
    assert (added.role, added.content, added.source_message_ids) == ("user", [text_part("also this")], ())
    assert MUTATION_NOTE in added.metadata.notes
    assert notes == ["mutation 0: appended a user message (1 part)"]


def test_prepend_adds_a_message_first() -> None:
    messages, _ = apply({"op": "prepend", "role": "system", "parts": [text_part("context")]})
    assert (messages[0].role, messages[0].content) == ("system", "context")


def test_append_to_last_user_extends_that_message() -> None:
    messages, notes = apply({"op": "appendTo", "target": "last-user", "parts": [text_part("P.S.")]})
    assert messages[2].content == [text_part("second"), text_part("P.S.")]
    assert messages[2].source_message_ids == ("u2",)
    assert notes == ["mutation 0: appended 1 part to the last-user message"]


def test_append_to_last_assistant_extends_that_message() -> None:
    messages, _ = apply({"op": "appendTo", "target": "last-assistant", "parts": [text_part("(edited)")]})
    assert messages[1].content == [text_part("reply"), text_part("(edited)")]


def test_insert_after_and_before_place_next_to_the_stored_id() -> None:
    messages, notes = apply(
        {"op": "insertAfter", "messageId": "a1", "role": "user", "parts": [text_part("after")]},
        {"op": "insertBefore", "messageId": "u1", "role": "user", "parts": [text_part("before")]},
    )
    assert [message.content for message in messages] == [
        [text_part("before")],
        "first",
        "reply",
        [text_part("after")],
        "second",
    ]
    assert notes[0] == "mutation 0: inserted a user message (1 part) after a1"


def test_mutations_never_change_the_input() -> None:
    before = list(HISTORY)
    apply({"op": "appendTo", "target": "last-user", "parts": [text_part("x")]})
    assert before == HISTORY


def test_missing_insert_target_is_a_clear_error() -> None:
    with pytest.raises(MutationTargetNotFound) as raised:
        apply({"op": "insertAfter", "messageId": "nope", "role": "user", "parts": [text_part("x")]})
    assert "nope" in raised.value.detail
    assert raised.value.extensions["field"] == "mutations[0].messageId"


def test_append_to_a_role_that_is_absent_is_a_clear_error() -> None:
    with pytest.raises(MutationTargetNotFound):
        apply_mutations(
            raw(user("only")),
            parse_mutations([{"op": "appendTo", "target": "last-assistant", "parts": [text_part("x")]}]),
        )


@pytest.mark.parametrize(
    ("mutation", "field"),
    [
        ({"op": "replace", "parts": [text_part("x")]}, "mutations[0].op"),
        ({"op": "append", "role": "tool", "parts": [text_part("x")]}, "mutations[0].role"),
        ({"op": "append", "parts": []}, "mutations[0].parts"),
        ({"op": "append", "role": "system", "parts": [{"type": "image", "image": "x"}]}, "mutations[0].parts[0]"),
        ({"op": "append", "parts": [{"type": "text"}]}, "mutations[0].parts[0].text"),
        ({"op": "append", "parts": [text_part("x"), "text"]}, "mutations[0].parts[1]"),
        ({"op": "append", "parts": [text_part("x", tags=["a"])]}, "mutations[0].parts[0].tags"),
        (
            {"op": "append", "parts": [{"type": "file", "data": "JVBERi0=", "media_type": "application/pdf"}]},
            "mutations[0].parts[0].mediaType",
        ),
        (
            {"op": "append", "parts": [{"type": "image", "image": "x", "mediaType": 1}]},
            "mutations[0].parts[0].mediaType",
        ),
        (
            {"op": "append", "parts": [text_part("x", providerOptions={"a": 1})]},
            "mutations[0].parts[0].providerOptions.a",
        ),
        ({"op": "appendTo", "target": "first-user", "parts": [text_part("x")]}, "mutations[0].target"),
        ({"op": "insertAfter", "role": "user", "parts": [text_part("x")]}, "mutations[0].messageId"),
        ({"op": "append", "messageId": "m1", "parts": [text_part("x")]}, "mutations[0].messageId"),
    ],
)
def test_malformed_mutation_names_its_field(mutation: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidMutation) as raised:
        parse_mutations([mutation])
    assert raised.value.extensions["field"] == field


@pytest.mark.parametrize(
    ("part", "detail"),
    [
        ({"type": "image", "image": "x"}, "a system mutation takes parts of type text"),
        ({"type": "text"}, "a text part needs a string text"),
        ({"type": "text", "text": "x", "tags": []}, "a text part does not take tags"),
    ],
)
def test_a_mutation_part_is_checked_against_the_stored_part_shapes(part: dict[str, Any], detail: str) -> None:
    with pytest.raises(InvalidMutation) as raised:
        parse_mutations([{"op": "append", "role": "system", "parts": [part]}])
    assert raised.value.detail == detail


def test_a_valid_mutation_part_goes_on_exactly_as_given() -> None:
    part = {"type": "image", "image": "iVBORw0KGgo=", "providerOptions": {"openai": {"detail": "low"}}}
    (mutation,) = parse_mutations([{"op": "append", "parts": [part]}])
    assert mutation.parts == (part,)
    assert list(mutation.parts[0]) == list(part)


def test_mutations_are_reported_in_the_chat_diagnostics_and_reach_the_payload() -> None:
    projection = Projection(View.MODEL, raw(user("hi", id="u1")), Diagnostics(hidden_message_ids=["m0"]))
    request = build_chat_request(
        projection,
        provider="anthropic",
        model="claude-sonnet-4-5",
        mutations=[
            {"op": "appendTo", "target": "last-user", "parts": [text_part("<system-reminder>x</system-reminder>")]}
        ],
    )
    assert request.payload["messages"][0]["content"][-1] == {
        "type": "text",
        "text": "<system-reminder>x</system-reminder>",
    }
    assert request.diagnostics.injected_notes == ["mutation 0: appended 1 part to the last-user message"]
    assert request.diagnostics.hidden_message_ids == ["m0"]
    assert projection.diagnostics.injected_notes == []  # the projection itself is left alone


def test_inserting_after_a_tool_call_lands_after_its_result() -> None:
    request = build_chat_request(
        raw(user("go", id="u1"), tool_call("c1", "Read", id="a1"), tool_result("c1", "done", id="t1")),
        provider="openai",
        model="gpt-5",
        mutations=[{"op": "insertAfter", "messageId": "a1", "role": "user", "parts": [text_part("note")]}],
    )
    roles = [message["role"] for message in request.payload["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]
    assert "moved-after-tool-results" in [repair.rule for repair in request.diagnostics.repairs]


def test_lone_surrogates_in_mutation_text_become_replacement_characters_reported_naming_the_message() -> None:
    messages, _, repairs = apply_mutations(
        HISTORY,
        parse_mutations(
            [
                {"op": "insertAfter", "messageId": "a1", "parts": [text_part("a\ud800b \ud83d\ude00")]},
                {"op": "appendTo", "target": "last-assistant", "parts": [text_part("ok")]},
                {"op": "appendTo", "target": "last-user", "parts": [text_part("P.S.\udc00")]},
            ]
        ),
    )
    assert messages[2].content == [text_part("a\ufffdb 😀")]  # the lone half replaced, the pair kept
    assert messages[3].content == [text_part("second"), text_part("P.S.\ufffd")]
    assert [(repair.rule, repair.detail, repair.message_ids) for repair in repairs] == [
        ("unpaired-surrogates", "replaced 1 unpaired UTF-16 surrogate(s) with U+FFFD in mutations[0].parts", ()),
        ("unpaired-surrogates", "replaced 1 unpaired UTF-16 surrogate(s) with U+FFFD in mutations[2].parts", ("u2",)),
    ]


def test_lone_surrogates_are_replaced_in_every_string_of_a_mutation_part() -> None:
    mutation = {
        "op": "prepend",
        "role": "system",
        "parts": [text_part("rule\udfff", providerOptions={"anthropic": {"cacheControl": "\ud800"}})],
    }
    messages, _, repairs = apply_mutations(HISTORY, parse_mutations([mutation]))
    assert messages[0].content == "rule\ufffd"
    assert [repair.rule for repair in repairs] == ["unpaired-surrogates"]


def test_nul_characters_in_mutation_text_go_only_where_the_target_refuses_them() -> None:
    mutation = {"op": "append", "parts": [text_part("a\x00b")]}
    kept, _, none = apply_mutations(HISTORY, parse_mutations([mutation]))
    removed, _, repairs = apply_mutations(HISTORY, parse_mutations([mutation]), remove_nul=True)
    assert (kept[-1].content, none) == ([text_part("a\x00b")], [])
    assert removed[-1].content == [text_part("ab")]
    assert [(repair.rule, repair.detail) for repair in repairs] == [
        ("nul-characters", "removed 1 NUL character(s) from mutations[0].parts")
    ]


def test_lone_surrogates_in_request_text_never_reach_the_payload() -> None:
    mutations = [
        {"op": "insertBefore", "messageId": "u1", "role": "user", "parts": [text_part("first\ud800")]},
        {"op": "append", "role": "system", "parts": [text_part("later\udc00")]},
        {"op": "appendTo", "target": "last-assistant", "parts": [text_part("\ud83d\ude00\ud83d")]},
    ]
    request = build_chat_request(
        HISTORY, provider="anthropic", model="claude-sonnet-4-5", system="sys\udc00", mutations=mutations
    )
    orjson.dumps(request.payload)  # orjson refuses any lone surrogate
    assert [repair.rule for repair in request.diagnostics.repairs].count("unpaired-surrogates") == 4
