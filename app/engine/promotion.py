"""Promotion: a persisted message becomes an ``EngineMessage`` with an explicit ``kind``.

This is the only place that reads ``metadata.runtimeKind``. The store also calls
``infer_kind`` at write time to fill its indexed ``kind`` column, so both must agree by construction: they
share this one function. Never reads the clock, the database or a provider format, and never rewrites
content: promotion interprets a message, it does not change it.
"""

from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any, assert_never

from app.engine.kinds import Kind, Role
from app.engine.message import EngineMessage
from app.engine.persisted import Content, PersistedMessage

_SUMMARY_ROLES: frozenset[Role] = frozenset({"system", "user"})

ALLOWED_ROLES: dict[Kind, frozenset[Role]] = {
    Kind.SYSTEM_NOTE: frozenset({"system"}),
    Kind.USER_INPUT: frozenset({"user"}),
    Kind.ASSISTANT_TEXT: frozenset({"assistant"}),
    Kind.ASSISTANT_REASONING: frozenset({"assistant"}),
    Kind.TOOL_CALL: frozenset({"assistant"}),
    Kind.TOOL_APPROVAL_REQUEST: frozenset({"assistant"}),
    Kind.TOOL_RESULT: frozenset({"tool"}),
    Kind.TOOL_APPROVAL_RESPONSE: frozenset({"tool"}),
    # opencode's compaction request is a user message, its summary the assistant's answer to it.
    Kind.COMPACT_BOUNDARY: frozenset({"system", "user"}),
    Kind.COMPACT_SUMMARY: _SUMMARY_ROLES | {"assistant"},
    Kind.RUNTIME_REMINDER: frozenset({"system"}),
    Kind.HANDOFF_SUMMARY: _SUMMARY_ROLES,
    Kind.AGENT_SWITCH_NOTE: frozenset({"system"}),
    Kind.MODEL_SWITCH_NOTE: frozenset({"system"}),
    Kind.BASH_EXECUTION: frozenset({"user"}),
    Kind.CUSTOM: frozenset({"user"}),
    Kind.BRANCH_SUMMARY: _SUMMARY_ROLES,
}
"""Which roles may carry each kind; a runtimeKind claimed on another role is ignored."""

_REQUIRED_PART: dict[Kind, str] = {
    Kind.TOOL_CALL: "tool-call",
    Kind.TOOL_APPROVAL_REQUEST: "tool-approval-request",
    Kind.TOOL_RESULT: "tool-result",
    Kind.TOOL_APPROVAL_RESPONSE: "tool-approval-response",
}
"""Kinds defined by a part: claiming one without that part would make views pair calls that do not exist."""


def infer_kind(role: Role, content: Content, metadata: dict[str, Any] | None) -> tuple[Kind, str | None]:
    """The message's kind and, when ``metadata.runtimeKind`` was present but ignored, why."""
    inferred = _kind_from_shape(role, content)
    raw = (metadata or {}).get("runtimeKind")
    if raw is None:
        return (Kind.COMPACT_SUMMARY if opencode_summary(role, metadata) else inferred), None
    if not isinstance(raw, str):
        return inferred, f"runtimeKind {raw!r} is not a string; inferred {inferred} from role {role}"
    try:
        claimed = Kind(raw)
    except ValueError:
        return inferred, f"runtimeKind {raw!r} is not a known kind; inferred {inferred} from role {role}"
    allowed = ALLOWED_ROLES[claimed]
    if role not in allowed:
        roles = " or ".join(sorted(allowed))
        return inferred, f"runtimeKind {raw!r} needs role {roles}, not {role}; inferred {inferred} from role {role}"
    required = _REQUIRED_PART.get(claimed)
    if required is not None and not _has_part(content, required):
        return inferred, f"runtimeKind {raw!r} needs a {required} part; inferred {inferred} from content"
    return claimed, None


def promote(message: PersistedMessage) -> EngineMessage:
    return promote_all((message,))[0]


def promote_all(messages: Iterable[PersistedMessage]) -> list[EngineMessage]:
    """Each message promoted, in order."""
    return promote_rows(map(_PERSISTED_FIELDS, messages))


def promote_rows(rows: Iterable[Sequence[Any]]) -> list[EngineMessage]:
    """Rows holding ``PersistedMessage``'s fields in declaration order, each promoted, in order, without a
    ``PersistedMessage`` built for it: the store's reads hand over a whole live history per request (10,000 rows in
    bench.overhead), so this is one loop with its lookups hoisted and one object per row.

    A message claiming nothing takes its kind from its shape. A tool or assistant message of exactly one part (the
    common call and result) has it decided here from that part's type, as ``_kind_from_shape`` decides it, without
    a call or a set per row."""
    role_kinds = _ROLE_KINDS.get
    from_shape = _kind_from_shape
    one_part_assistant = _ONE_PART_ASSISTANT_KINDS.get
    assistant_text = Kind.ASSISTANT_TEXT
    tool_result = Kind.TOOL_RESULT
    approval_response = Kind.TOOL_APPROVAL_RESPONSE
    engine_message = EngineMessage
    out: list[EngineMessage] = []
    append = out.append
    for id_, session_id, seq, role, content, created_at, metadata, run_id, token_estimate, unusual, stored in rows:
        note = None
        if metadata and (
            "runtimeKind" in metadata or (role == "assistant" and ("summary" in metadata or "result" in metadata))
        ):
            kind, note = infer_kind(role, content, metadata)
        elif role == "tool" and content.__class__ is list and len(content) == 1:
            kind = approval_response if content[0].get("type") == "tool-approval-response" else tool_result
        elif role == "assistant" and content.__class__ is list and len(content) == 1:
            kind = one_part_assistant(content[0].get("type"), assistant_text)
        else:
            kind = role_kinds(role) or from_shape(role, content)
        append(
            engine_message(
                id_,
                session_id,
                seq,
                role,
                kind,
                content,
                created_at,
                metadata,
                run_id,
                token_estimate,
                note,
                unusual,
                stored,
            )
        )
    return out


SUMMARY_MARKS = ("summary", "result")
"""The metadata keys ``opencode_summary`` reads: with ``runtimeKind``, all that decides a kind beyond the shape."""


def opencode_summary(role: Role, metadata: dict[str, Any] | None) -> bool:
    """An assistant message opencode wrote as a compaction summary: ``summary: true`` (its stored messages) or
    ``result.kind: "summary"`` (its turn-state shape). It is a ``compact_summary`` unless ``runtimeKind`` says
    otherwise; its boundary is the compaction request it answers (``parentID``), when nothing else names one."""
    if role != "assistant" or not metadata:
        return False
    result = metadata.get("result")
    return metadata.get("summary") is True or (isinstance(result, dict) and result.get("kind") == "summary")


_PERSISTED_FIELDS = attrgetter(
    "id",
    "session_id",
    "seq",
    "role",
    "content",
    "created_at",
    "metadata",
    "run_id",
    "token_estimate",
    "unusual_text",
    "stored_bytes",
)
"""A ``PersistedMessage`` as the row ``promote_rows`` takes."""

_ROLE_KINDS: dict[str, Kind] = {"system": Kind.SYSTEM_NOTE, "user": Kind.USER_INPUT}
"""The roles whose shape-inferred kind does not depend on content (``_kind_from_shape``'s first cases)."""

_ONE_PART_ASSISTANT_KINDS: dict[Any, Kind] = {
    "tool-call": Kind.TOOL_CALL,
    "tool-approval-request": Kind.TOOL_APPROVAL_REQUEST,
    "reasoning": Kind.ASSISTANT_REASONING,
}
"""An assistant message of one part whose kind is not assistant_text, by that part's type (``_assistant_kind``
of a set of one). The lookup hashes the type as that set does, so a type no set holds fails the same way."""


def _kind_from_shape(role: Role, content: Content) -> Kind:
    match role:
        case "system":
            return Kind.SYSTEM_NOTE
        case "user":
            return Kind.USER_INPUT
        case "assistant":
            return _assistant_kind(content)
        case "tool":
            # A tool message holding only approval answers is an approval response; any result makes it a
            # result, because pairing with its call is what matters most downstream.
            if isinstance(content, str):
                return Kind.TOOL_RESULT
            approval = False
            for part in content:
                part_type = part.get("type")
                if part_type == "tool-result":
                    return Kind.TOOL_RESULT
                approval = approval or part_type == "tool-approval-response"
            return Kind.TOOL_APPROVAL_RESPONSE if approval else Kind.TOOL_RESULT
        case _:
            assert_never(role)


def _assistant_kind(content: Content) -> Kind:
    if isinstance(content, str):
        return Kind.ASSISTANT_TEXT
    types = {part.get("type") for part in content}
    if "tool-call" in types:
        return Kind.TOOL_CALL
    if "tool-approval-request" in types:
        return Kind.TOOL_APPROVAL_REQUEST
    # Only reasoning makes a reasoning message: reasoning beside text stays assistant_text, so that hiding
    # reasoning never hides the answer with it.
    if types == {"reasoning"}:
        return Kind.ASSISTANT_REASONING
    return Kind.ASSISTANT_TEXT


def _has_part(content: Content, part_type: str) -> bool:
    return not isinstance(content, str) and any(part.get("type") == part_type for part in content)
