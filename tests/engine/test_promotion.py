"""Promotion: every kind, inferred or claimed, and why a claim is ignored."""

import itertools
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engine.kinds import ROLES, Kind, Role
from app.engine.persisted import Content, PersistedMessage
from app.engine.promotion import ALLOWED_ROLES, infer_kind, promote, promote_all
from tests.strategies import histories

CALL = {"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "input": {"path": "a.ts"}}
RESULT = {
    "type": "tool-result",
    "toolCallId": "c1",
    "toolName": "Read",
    "output": {"type": "text", "value": "x"},
}
REASONING = {"type": "reasoning", "text": "thinking"}
TEXT = {"type": "text", "text": "hello"}
APPROVAL_REQUEST = {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"}
APPROVAL_RESPONSE = {"type": "tool-approval-response", "approvalId": "a1", "approved": True}


@pytest.mark.parametrize(
    ("role", "content", "kind"),
    [
        ("system", "Workspace root is /repo", Kind.SYSTEM_NOTE),
        ("user", "hi", Kind.USER_INPUT),
        ("user", [TEXT, {"type": "image", "image": "aGk=", "mediaType": "image/png"}], Kind.USER_INPUT),
        ("assistant", "done", Kind.ASSISTANT_TEXT),
        ("assistant", [TEXT], Kind.ASSISTANT_TEXT),
        ("assistant", [], Kind.ASSISTANT_TEXT),
        ("assistant", [REASONING], Kind.ASSISTANT_REASONING),
        ("assistant", [REASONING, TEXT], Kind.ASSISTANT_TEXT),
        ("assistant", [REASONING, TEXT, CALL], Kind.TOOL_CALL),
        ("assistant", [APPROVAL_REQUEST], Kind.TOOL_APPROVAL_REQUEST),
        ("assistant", [CALL, APPROVAL_REQUEST], Kind.TOOL_CALL),
        ("tool", [RESULT], Kind.TOOL_RESULT),
        ("tool", [], Kind.TOOL_RESULT),
        ("tool", [APPROVAL_RESPONSE], Kind.TOOL_APPROVAL_RESPONSE),
        ("tool", [APPROVAL_RESPONSE, RESULT], Kind.TOOL_RESULT),
    ],
)
def test_kind_is_inferred_from_role_and_parts(role: Role, content: Content, kind: Kind) -> None:
    assert infer_kind(role, content, {}) == (kind, None)


def test_reasoning_beside_text_is_text_so_hiding_reasoning_never_hides_the_answer() -> None:
    assert infer_kind("assistant", [REASONING, TEXT], None)[0] is Kind.ASSISTANT_TEXT


@pytest.mark.parametrize(
    ("kind", "role", "content"),
    [
        (Kind.COMPACT_BOUNDARY, "system", "compacted"),
        (Kind.COMPACT_SUMMARY, "system", "summary"),
        (Kind.COMPACT_SUMMARY, "user", "summary"),
        (Kind.RUNTIME_REMINDER, "system", "remember"),
        (Kind.HANDOFF_SUMMARY, "user", "handoff"),
        (Kind.HANDOFF_SUMMARY, "system", "handoff"),
        (Kind.AGENT_SWITCH_NOTE, "system", "switched to plan"),
        (Kind.MODEL_SWITCH_NOTE, "system", "model changed to openai/gpt-5"),
        (Kind.BASH_EXECUTION, "user", "ls"),
        (Kind.CUSTOM, "user", [TEXT]),
        (Kind.BRANCH_SUMMARY, "system", "branch"),
        (Kind.BRANCH_SUMMARY, "user", "branch"),
        (Kind.SYSTEM_NOTE, "system", "note"),
        (Kind.USER_INPUT, "user", "hi"),
        (Kind.ASSISTANT_TEXT, "assistant", [REASONING]),
        (Kind.ASSISTANT_REASONING, "assistant", [REASONING, TEXT]),
        (Kind.TOOL_CALL, "assistant", [CALL]),
        (Kind.TOOL_APPROVAL_REQUEST, "assistant", [APPROVAL_REQUEST]),
        (Kind.TOOL_RESULT, "tool", [RESULT]),
        (Kind.TOOL_APPROVAL_RESPONSE, "tool", [APPROVAL_RESPONSE]),
    ],
)
def test_valid_runtime_kind_wins(kind: Kind, role: Role, content: Content) -> None:
    assert infer_kind(role, content, {"runtimeKind": kind.value}) == (kind, None)


def test_every_kind_has_roles_that_may_carry_it() -> None:
    assert set(ALLOWED_ROLES) == set(Kind)


@pytest.mark.parametrize(
    ("role", "content", "metadata", "kind", "reason"),
    [
        ("user", "hi", {"runtimeKind": "task_notification"}, Kind.USER_INPUT, "not a known kind"),
        ("user", "hi", {"runtimeKind": 7}, Kind.USER_INPUT, "not a string"),
        ("user", "hi", {"runtimeKind": "runtime_reminder"}, Kind.USER_INPUT, "needs role system, not user"),
        ("assistant", "x", {"runtimeKind": "tool_result"}, Kind.ASSISTANT_TEXT, "needs role tool"),
        ("system", "x", {"runtimeKind": "bash_execution"}, Kind.SYSTEM_NOTE, "needs role user"),
        ("tool", [RESULT], {"runtimeKind": "compact_summary"}, Kind.TOOL_RESULT, "system or user"),
        ("assistant", "x", {"runtimeKind": "tool_call"}, Kind.ASSISTANT_TEXT, "needs a tool-call part"),
    ],
)
def test_unknown_or_role_incompatible_runtime_kind_is_ignored_with_a_reason(
    role: Role, content: Content, metadata: dict[str, Any], kind: Kind, reason: str
) -> None:
    inferred, note = infer_kind(role, content, metadata)
    assert inferred is kind
    assert note is not None
    assert reason in note
    assert f"inferred {kind}" in note


def test_promote_keeps_the_facts_and_records_the_reason() -> None:
    stored = PersistedMessage(
        id="m1",
        session_id="s1",
        seq=4,
        role="user",
        content="hi",
        created_at=datetime(2026, 4, 8, tzinfo=UTC),
        metadata={"runtimeKind": "runtime_reminder", "tags": ["x"]},
        run_id="r1",
        token_estimate=3,
    )
    message = promote(stored)
    assert (message.id, message.session_id, message.seq, message.role) == ("m1", "s1", 4, "user")
    assert (message.content, message.metadata, message.run_id, message.token_estimate) == (
        "hi",
        stored.metadata,
        "r1",
        3,
    )
    assert message.created_at == stored.created_at
    assert message.kind is Kind.USER_INPUT
    assert message.promotion_note is not None


def test_promote_without_runtime_kind_has_no_note() -> None:
    stored = PersistedMessage(
        id="m1",
        session_id="s1",
        seq=1,
        role="system",
        content="x",
        created_at=datetime(2026, 4, 8, tzinfo=UTC),
    )
    assert promote(stored).promotion_note is None


_CLAIMS = st.sampled_from([None, None, *Kind, "not-a-kind", 3])


@st.composite
def claimed_histories(draw: st.DrawFn) -> list[PersistedMessage]:
    """Random histories whose messages now and then claim a ``runtimeKind``, fitting or not."""
    messages = draw(histories())
    claims = [draw(_CLAIMS) for _ in messages]
    return [
        replace(message, metadata={**message.metadata, "runtimeKind": claim}) if claim is not None else message
        for message, claim in zip(messages, claims, strict=True)
    ]


@given(claimed_histories())
def test_promoting_a_window_gives_each_message_the_kind_and_note_infer_kind_gives(
    history: list[PersistedMessage],
) -> None:
    """``promote_rows`` skips ``infer_kind`` for a message claiming nothing and reads a system or user kind from
    a table: what it gives must be what ``infer_kind`` gives."""
    for message, promoted in zip(history, promote_all(history), strict=True):
        assert (promoted.kind, promoted.promotion_note) == infer_kind(message.role, message.content, message.metadata)


_PART_TYPES: list[Any] = [
    "text",
    "reasoning",
    "file",
    "image",
    "tool-call",
    "tool-result",
    "tool-approval-request",
    "tool-approval-response",
    "tool-call ",
    None,
    3,
    ["tool-call"],
]
"""Every part type promotion tells apart, a near miss and JSON values no part should have as its type (a list
cannot go into a set)."""
_SHAPE_PARTS: list[dict[str, Any]] = [{}, *({"type": part_type} for part_type in _PART_TYPES)]
_SHAPE_METADATA: list[dict[str, Any]] = [
    {},
    {"finishReason": "stop"},
    {"runtimeKind": "tool_call"},
    {"runtimeKind": "assistant_reasoning"},
    {"runtimeKind": "tool_approval_response"},
    {"runtimeKind": 3},
    {"summary": True},
    {"result": {"kind": "summary"}},
]


def _promoted_or_error(role: Role, content: Any, metadata: dict[str, Any]) -> object:
    message = PersistedMessage(
        id="m1",
        session_id="s1",
        seq=1,
        role=role,
        content=content,
        created_at=datetime(2026, 4, 8, tzinfo=UTC),
        metadata=metadata,
    )
    try:
        promoted = promote(message)
    except TypeError as error:
        return type(error)
    return promoted.kind, promoted.promotion_note


def _inferred_or_error(role: Role, content: Any, metadata: dict[str, Any]) -> object:
    try:
        return infer_kind(role, content, metadata)
    except TypeError as error:
        return type(error)


def test_every_message_of_up_to_two_parts_promotes_to_the_kind_and_note_infer_kind_gives() -> None:
    """``promote_rows`` decides a one-part tool or assistant message from that part's type itself, without
    ``_kind_from_shape``: for every role, claim and content of up to two parts it must agree with ``infer_kind``,
    failing where it fails (two parts, because only one may take the shortcut)."""
    contents = [list(parts) for size in (0, 1, 2) for parts in itertools.product(_SHAPE_PARTS, repeat=size)]
    for role, content, metadata in itertools.product(ROLES, contents, _SHAPE_METADATA):
        assert _promoted_or_error(role, content, metadata) == _inferred_or_error(role, content, metadata), (
            role,
            content,
            metadata,
        )


@given(
    st.sampled_from(ROLES),
    st.one_of(st.text(max_size=3), st.lists(st.sampled_from(_SHAPE_PARTS), max_size=4)),
    st.sampled_from(_SHAPE_METADATA),
)
def test_any_shape_promotes_to_the_kind_and_note_infer_kind_gives(
    role: Role, content: Any, metadata: dict[str, Any]
) -> None:
    """The same for text and longer contents."""
    assert _promoted_or_error(role, content, metadata) == _inferred_or_error(role, content, metadata)
