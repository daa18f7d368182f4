"""Small builders that read like the domain, for histories in tests.

Each builder returns one ``PersistedMessage`` with ``seq`` 0 and, unless given, an empty id; ``history``
numbers a sequence of them (seq 1, 2, ...; id ``m<seq>`` when none was given) and marks those holding a NUL
or an unpaired surrogate, exactly as the store would.
``engine`` does the same and promotes. Builders never share state, so tests stay independent.

    history(user("hi"), tool_call("c1", "Read", path="a.ts"), tool_result("c1", "...", compacted=True))
"""

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from app.engine.kinds import Kind, Role
from app.engine.message import EngineMessage
from app.engine.persisted import Content, PersistedMessage
from app.engine.promotion import promote
from app.store.storable import measure

SESSION_ID = "s1"
T0 = datetime(2026, 4, 8, 10, 0, tzinfo=UTC)
COMPACTED_AT = "2026-04-08T10:00:00Z"
SIGNATURE = "sig-abc"


def marked(message: PersistedMessage) -> bool:
    """Whether the store marks this message when it is written (``unusual_text``)."""
    return any(measure(value, "value", 1_000).unusual_text for value in (message.content, message.metadata))


def history(*messages: PersistedMessage, start_seq: int = 1) -> list[PersistedMessage]:
    """Number messages as the store does: gap-free seq, ``m<seq>`` ids where none was given, marked."""
    numbered = []
    for offset, message in enumerate(messages):
        seq = start_seq + offset
        numbered.append(
            replace(
                message,
                seq=seq,
                id=message.id or f"m{seq}",
                created_at=T0 + timedelta(seconds=seq),
                unusual_text=marked(message),
            )
        )
    return numbered


def engine(*messages: PersistedMessage, start_seq: int = 1) -> list[EngineMessage]:
    return [promote(message) for message in history(*messages, start_seq=start_seq)]


def message(
    role: Role, content: Content, *, id: str = "", run_id: str | None = None, **metadata: Any
) -> PersistedMessage:
    return PersistedMessage(
        id=id,
        session_id=SESSION_ID,
        seq=0,
        role=role,
        content=content,
        created_at=T0,
        metadata=dict(metadata),
        run_id=run_id,
    )


# Parts ---------------------------------------------------------------------------------------------------


def text_part(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, **extra}


def image_part(data: str = "iVBORw0KGgo=", media_type: str | None = "image/png") -> dict[str, Any]:
    return {"type": "image", "image": data, "mediaType": media_type}


def file_part(
    data: str = "JVBERi0=", media_type: str = "application/pdf", filename: str | None = "report.pdf"
) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "file", "data": data, "mediaType": media_type}
    if filename is not None:
        part["filename"] = filename
    return part


def reasoning_part(text: str, *, signature: str | None = None, provider: str = "anthropic") -> dict[str, Any]:
    part: dict[str, Any] = {"type": "reasoning", "text": text}
    if signature is not None:
        key = "thoughtSignature" if provider == "google" else "signature"
        part["providerOptions"] = {provider: {key: signature}}
    return part


def call_part(call_id: str, tool_name: str, input: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "tool-call", "toolCallId": call_id, "toolName": tool_name, "input": input or {}}


def result_part(
    call_id: str,
    value: Any = "",
    *,
    tool_name: str = "Read",
    output_type: str = "text",
    output: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A tool-result part; ``output`` overrides the ``{type, value}`` pair (e.g. execution-denied)."""
    return {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": tool_name,
        "output": output if output is not None else {"type": output_type, "value": value},
    }


def media_item(data: str = "iVBORw0KGgo=", media_type: str = "image/png") -> dict[str, Any]:
    """An image inside a ``content`` tool output (the ``media`` item valid on AI SDK v5 and v6)."""
    return {"type": "media", "data": data, "mediaType": media_type}


# Messages ------------------------------------------------------------------------------------------------


def system(text: str, **metadata: Any) -> PersistedMessage:
    return message("system", text, **metadata)


def user(content: Content, **metadata: Any) -> PersistedMessage:
    return message("user", content, **metadata)


def assistant(
    content: Content, *, provider: str | None = None, model: object = None, **metadata: Any
) -> PersistedMessage:
    """``model``: the producer's model in any form a runtime writes (an id, ``provider/modelId``, an object)."""
    if provider is not None:
        metadata["provider"] = provider
    if model is not None:
        metadata["model"] = model
    return message("assistant", content, **metadata)


def reasoning(
    text: str,
    *,
    answer: str | None = None,
    signature: str | None = SIGNATURE,
    provider: str = "anthropic",
    model: str = "claude-sonnet-4-5",
    **metadata: Any,
) -> PersistedMessage:
    """An assistant turn that thought (signed, by default) and, with ``answer``, also said something."""
    parts = [reasoning_part(text, signature=signature, provider=provider)]
    if answer is not None:
        parts.append(text_part(answer))
    return assistant(parts, provider=provider, model=model, **metadata)


def tool_call(
    call_id: str,
    tool_name: str,
    input: dict[str, Any] | None = None,
    *,
    id: str = "",
    provider: str | None = None,
    model: str | None = None,
    **input_fields: Any,
) -> PersistedMessage:
    """``tool_call("c1", "Read", path="a.ts")``: one assistant message holding one call.

    Keyword arguments are the tool's input; for metadata use ``tool_calls(call_part(...), **metadata)``.
    """
    arguments = {**(input or {}), **input_fields}
    return assistant([call_part(call_id, tool_name, arguments)], id=id, provider=provider, model=model)


def tool_calls(*parts: dict[str, Any], id: str = "", **metadata: Any) -> PersistedMessage:
    """Several parts (calls, text, reasoning) in one assistant message."""
    return message("assistant", list(parts), id=id, **metadata)


def tool_result(
    call_id: str,
    value: Any = "",
    *,
    tool_name: str = "Read",
    output_type: str = "text",
    output: dict[str, Any] | None = None,
    compacted: bool = False,
    id: str = "",
    **metadata: Any,
) -> PersistedMessage:
    if compacted:
        metadata["compactedAt"] = COMPACTED_AT
    part = result_part(call_id, value, tool_name=tool_name, output_type=output_type, output=output)
    return message("tool", [part], id=id, **metadata)


def tool_results(*parts: dict[str, Any], id: str = "", **metadata: Any) -> PersistedMessage:
    return message("tool", list(parts), id=id, **metadata)


def approval_request(approval_id: str, call_id: str, **metadata: Any) -> PersistedMessage:
    part = {"type": "tool-approval-request", "approvalId": approval_id, "toolCallId": call_id}
    return message("assistant", [part], **metadata)


def approval_response(
    approval_id: str, *, approved: bool = True, reason: str | None = None, **metadata: Any
) -> PersistedMessage:
    part: dict[str, Any] = {"type": "tool-approval-response", "approvalId": approval_id, "approved": approved}
    if reason is not None:
        part["reason"] = reason
    return message("tool", [part], **metadata)


def runtime(kind: Kind, content: Content, *, role: Role = "system", id: str = "", **metadata: Any) -> PersistedMessage:
    return message(role, content, id=id, runtimeKind=kind.value, **metadata)


def boundary(
    id: str, *, through: str | None = None, text: str = "Conversation compacted", role: Role = "system", **metadata: Any
) -> PersistedMessage:
    if through is not None:
        metadata["compactThroughMessageId"] = through
    return runtime(Kind.COMPACT_BOUNDARY, text, role=role, id=id, eligibleForModelContext=False, **metadata)


def summary(boundary_id: str, text: str, *, id: str = "", role: Role = "user", **metadata: Any) -> PersistedMessage:
    return runtime(Kind.COMPACT_SUMMARY, text, role=role, id=id, summaryForBoundaryId=boundary_id, **metadata)


def reminder(text: str, **metadata: Any) -> PersistedMessage:
    return runtime(Kind.RUNTIME_REMINDER, text, **metadata)


def handoff(text: str, *, role: Role = "system", **metadata: Any) -> PersistedMessage:
    return runtime(Kind.HANDOFF_SUMMARY, text, role=role, **metadata)


def branch_summary(text: str, *, role: Role = "system", **metadata: Any) -> PersistedMessage:
    return runtime(Kind.BRANCH_SUMMARY, text, role=role, **metadata)


def agent_switch(text: str, *, as_reminder: bool = False, **metadata: Any) -> PersistedMessage:
    """An agent switch marker; ``as_reminder`` tags it so the model view sends it as a reminder."""
    return _switch(Kind.AGENT_SWITCH_NOTE, text, as_reminder, metadata)


def model_switch(text: str, *, as_reminder: bool = False, **metadata: Any) -> PersistedMessage:
    """A model switch marker; ``as_reminder`` tags it so the model view sends it as a reminder."""
    return _switch(Kind.MODEL_SWITCH_NOTE, text, as_reminder, metadata)


def _switch(kind: Kind, text: str, as_reminder: bool, metadata: dict[str, Any]) -> PersistedMessage:
    if as_reminder:
        metadata["tags"] = [*metadata.get("tags", []), "reminder"]
    return runtime(kind, text, **metadata)


def bash(
    command: str,
    output: str = "",
    *,
    exit_code: int | None = 0,
    cancelled: bool = False,
    truncated: bool = False,
    full_output_path: str | None = None,
    exclude: bool = False,
    **metadata: Any,
) -> PersistedMessage:
    return runtime(
        Kind.BASH_EXECUTION,
        command,
        role="user",
        command=command,
        output=output,
        exitCode=exit_code,
        cancelled=cancelled,
        truncated=truncated,
        fullOutputPath=full_output_path,
        excludeFromContext=exclude,
        **metadata,
    )


def custom(
    content: Content,
    *,
    custom_type: str = "note",
    display: bool = True,
    display_only: bool = False,
    details: dict[str, Any] | None = None,
    **metadata: Any,
) -> PersistedMessage:
    """An extension's message: ``display`` shows it in the UI, ``display_only`` keeps it from the model."""
    if display_only:
        metadata["displayOnly"] = True
    return runtime(
        Kind.CUSTOM,
        content,
        role="user",
        customType=custom_type,
        display=display,
        details=details or {},
        **metadata,
    )
