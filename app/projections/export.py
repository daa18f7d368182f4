"""The export view: the conversation for sharing and reports, without runtime noise, optionally redacted.

Runtime noise is what the runtime wrote to steer or manage the model rather than what was said and done:
reminders, agent and model switch markers, compaction boundaries and their summaries (the full history is right
there), synthetic messages, and what the transcript hides. Provider metadata (signatures, item ids) is
dropped from parts: it is opaque and bound to one provider. With ``redact`` every text, tool input, tool
output and exported fact goes through ``redaction``. Decisions are per message, so any page exports the
same as the whole. Rendering to Markdown is ``markdown.render_markdown``; never writes files.
"""

from collections.abc import Sequence
from typing import Any, assert_never

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.persisted import Content
from app.projections.record import in_order, position
from app.projections.redaction import redact_content, redact_value
from app.projections.transcript import transcript_hidden_reason
from app.projections.types import Diagnostics, ProjectedMessage, ProjectedMetadata, Projection, ProjectionContext, View

BASH_FACTS = ("command", "output", "exitCode", "cancelled", "truncated")
CUSTOM_FACTS = ("customType", "details")
ASSISTANT_FACTS = ("provider", "model")


def project_export(messages: Sequence[EngineMessage], ctx: ProjectionContext) -> Projection:
    diagnostics = Diagnostics()
    out: list[ProjectedMessage] = []
    for message in in_order(list(messages)):
        reason = export_hidden_reason(message)
        if reason is not None:
            diagnostics.hidden_message_ids.append(message.id)
            diagnostics.reasons[message.id] = [reason]
            continue
        content = _without_provider_metadata(message.content)
        extra: dict[str, Any] = {**position(message), **_facts(message)}
        notes: tuple[str, ...] = ()
        if ctx.redact:
            redacted = redact_content(content)
            redacted_extra = redact_value(extra)
            if redacted != content or redacted_extra != extra:
                notes = ("secrets redacted",)
                diagnostics.reasons[message.id] = ["secrets redacted"]
            content, extra = redacted, redacted_extra
        out.append(
            ProjectedMessage(
                view=View.EXPORT,
                role=message.role,
                semantic_type=message.kind,
                source_message_ids=(message.id,),
                content=content,
                metadata=ProjectedMetadata(notes=notes, extra=extra),
            )
        )
    return Projection(View.EXPORT, out, diagnostics)


def export_hidden_reason(message: EngineMessage) -> str | None:
    hidden = transcript_hidden_reason(message)
    if hidden is not None:
        return hidden
    match message.kind:
        case Kind.AGENT_SWITCH_NOTE:
            return "runtime noise: agent switch marker"
        case Kind.MODEL_SWITCH_NOTE:
            return "runtime noise: model switch marker"
        case Kind.COMPACT_BOUNDARY | Kind.COMPACT_SUMMARY:
            return "runtime noise: compaction record (the full history is exported)"
        case Kind.RUNTIME_REMINDER:
            return "runtime noise: runtime reminder"
        case (
            Kind.SYSTEM_NOTE
            | Kind.USER_INPUT
            | Kind.ASSISTANT_TEXT
            | Kind.ASSISTANT_REASONING
            | Kind.TOOL_CALL
            | Kind.TOOL_RESULT
            | Kind.TOOL_APPROVAL_REQUEST
            | Kind.TOOL_APPROVAL_RESPONSE
            | Kind.HANDOFF_SUMMARY
            | Kind.BASH_EXECUTION
            | Kind.CUSTOM
            | Kind.BRANCH_SUMMARY
        ):
            return None
        case _:
            assert_never(message.kind)


def _facts(message: EngineMessage) -> dict[str, Any]:
    match message.kind:
        case Kind.BASH_EXECUTION:
            keys: tuple[str, ...] = BASH_FACTS
        case Kind.CUSTOM:
            keys = CUSTOM_FACTS
        case _ if message.role == "assistant":
            keys = ASSISTANT_FACTS
        case _:
            keys = ()
    return {key: message.metadata[key] for key in keys if message.metadata.get(key) is not None}


def _without_provider_metadata(content: Content) -> Content:
    if isinstance(content, str):
        return content
    return [{k: v for k, v in part.items() if k != "providerOptions"} for part in content]
