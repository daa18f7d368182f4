"""The debug view: every message given, all its metadata, and why each one is hidden, cut or stubbed.

Each message appears once with its stored content; the flags and notes say what the model and transcript
views do with it (computed over the same input, so over a page the reasons that depend on the live history are those of
that page). The diagnostics are the model view's. Never hides anything itself.
"""

from collections.abc import Sequence

from app.engine.message import EngineMessage
from app.projections.model import project_model
from app.projections.record import in_order, position
from app.projections.transcript import project_transcript
from app.projections.types import ProjectedMessage, ProjectedMetadata, Projection, ProjectionContext, View


def project_debug(messages: Sequence[EngineMessage], ctx: ProjectionContext) -> Projection:
    model = project_model(messages, ctx)
    transcript = project_transcript(messages, ctx)
    hidden_from_model = set(model.diagnostics.hidden_message_ids)
    hidden_from_transcript = set(transcript.diagnostics.hidden_message_ids)
    truncated = set(model.diagnostics.truncated_message_ids)
    out: list[ProjectedMessage] = []
    for message in in_order(list(messages)):
        model_reasons = model.diagnostics.reasons.get(message.id, [])
        transcript_reasons = transcript.diagnostics.reasons.get(message.id, [])
        notes = [
            *([f"promotion: {message.promotion_note}"] if message.promotion_note else []),
            *(f"model: {reason}" for reason in model_reasons),
            *(f"transcript: {reason}" for reason in transcript_reasons),
        ]
        out.append(
            ProjectedMessage(
                view=View.DEBUG,
                role=message.role,
                semantic_type=message.kind,
                source_message_ids=(message.id,),
                content=message.content,
                metadata=ProjectedMetadata(
                    hidden_from_transcript=message.id in hidden_from_transcript,
                    hidden_from_model=message.id in hidden_from_model,
                    truncated=message.id in truncated,
                    compacted=bool(message.metadata.get("compactedAt")),
                    notes=tuple(notes),
                    extra={
                        **position(message),
                        "tokenEstimate": message.token_estimate,
                        "metadata": message.metadata,
                        "promotionNote": message.promotion_note,
                        "modelReasons": list(model_reasons),
                        "transcriptReasons": list(transcript_reasons),
                    },
                ),
            )
        )
    return Projection(View.DEBUG, out, model.diagnostics)
