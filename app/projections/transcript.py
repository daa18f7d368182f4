"""The transcript view: the whole process, for a chat UI, a CLI or a history page.

Everything stays in order, with full tool results and compaction boundaries as markers; only what a reader
should not see is hidden: messages marked ``visibleInTranscript: false``, synthetic runtime messages,
runtime reminders and custom messages with ``display: false``. Decisions are per message, so any page of a
session projects the same as the whole. Never trims, stubs or windows content: that is the model view's.
"""

from collections.abc import Sequence
from typing import assert_never

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.record import in_order, position
from app.projections.types import Diagnostics, ProjectedMessage, ProjectedMetadata, Projection, ProjectionContext, View


def project_transcript(messages: Sequence[EngineMessage], ctx: ProjectionContext) -> Projection:
    diagnostics = Diagnostics()
    out: list[ProjectedMessage] = []
    for message in in_order(list(messages)):
        reason = transcript_hidden_reason(message)
        if reason is not None:
            diagnostics.hidden_message_ids.append(message.id)
            diagnostics.reasons[message.id] = [reason]
            continue
        notes = (message.promotion_note,) if message.promotion_note else ()
        out.append(
            ProjectedMessage(
                view=View.TRANSCRIPT,
                role=message.role,
                semantic_type=message.kind,
                source_message_ids=(message.id,),
                content=message.content,
                metadata=ProjectedMetadata(
                    compacted=bool(message.metadata.get("compactedAt")),
                    notes=notes,
                    extra={**position(message), "metadata": message.metadata},
                ),
            )
        )
    return Projection(View.TRANSCRIPT, out, diagnostics)


def transcript_hidden_reason(message: EngineMessage) -> str | None:
    if message.metadata.get("visibleInTranscript") is False:
        return "visibleInTranscript is false"
    if message.metadata.get("synthetic") is True:
        return "synthetic runtime message"
    match message.kind:
        case Kind.RUNTIME_REMINDER:
            return "runtime reminder: for the model, not the reader"
        case Kind.CUSTOM:
            return "custom message with display off" if message.metadata.get("display") is False else None
        case (
            Kind.SYSTEM_NOTE
            | Kind.USER_INPUT
            | Kind.ASSISTANT_TEXT
            | Kind.ASSISTANT_REASONING
            | Kind.TOOL_CALL
            | Kind.TOOL_RESULT
            | Kind.TOOL_APPROVAL_REQUEST
            | Kind.TOOL_APPROVAL_RESPONSE
            | Kind.COMPACT_BOUNDARY
            | Kind.COMPACT_SUMMARY
            | Kind.HANDOFF_SUMMARY
            | Kind.AGENT_SWITCH_NOTE
            | Kind.MODEL_SWITCH_NOTE
            | Kind.BASH_EXECUTION
            | Kind.BRANCH_SUMMARY
        ):
            return None
        case _:
            assert_never(message.kind)
