"""The debug view: every message given, all its metadata, and why each one is hidden, cut or stubbed.

Each message appears once with its stored content; the flags and notes say what the model and transcript
views do with it. The model decisions are those of the model view over the whole model input (``window``:
the live history the model view reads), whatever page of the session is shown: a page without the
compaction records, or holding a result whose call is on the page before, is still judged as the model
sees it. A message of the page that is not in the window lies before the applied compaction. Transcript
decisions are per message, so the page alone decides them. The diagnostics are the model view's, narrowed to
the page. Never hides anything itself.
"""

from collections.abc import Sequence

from app.engine.message import EngineMessage
from app.projections.model import before_window, project_model
from app.projections.record import in_order, position
from app.projections.transcript import project_transcript
from app.projections.types import (
    Diagnostics,
    ProjectedMessage,
    ProjectedMetadata,
    Projection,
    ProjectionContext,
    View,
)


def project_debug(
    messages: Sequence[EngineMessage], ctx: ProjectionContext, window: Sequence[EngineMessage] | None = None
) -> Projection:
    """``messages``: the page shown; ``window``: what the model view is given for the same snapshot (the live
    history), ``None`` when ``messages`` is that input itself."""
    model = project_model(messages if window is None else window, ctx)
    diagnostics = model.diagnostics if window is None else _outside_window(model, messages)
    transcript = project_transcript(messages, ctx)
    hidden_from_model = set(diagnostics.hidden_message_ids)
    hidden_from_transcript = set(transcript.diagnostics.hidden_message_ids)
    truncated = set(diagnostics.truncated_message_ids)
    out: list[ProjectedMessage] = []
    for message in in_order(list(messages)):
        model_reasons = diagnostics.reasons.get(message.id, [])
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
    return Projection(View.DEBUG, out, diagnostics)


def _outside_window(model: Projection, page: Sequence[EngineMessage]) -> Diagnostics:
    """The model view's diagnostics for the messages of ``page``; those it was never given (older than the
    applied compaction's window) are hidden for that reason."""
    found = model.diagnostics
    on_page = {message.id for message in page}
    sent = {source for projected in model.messages for source in projected.source_message_ids}
    seen = sent | set(found.hidden_message_ids)
    boundary = found.applied_compact_boundary_id
    reasons = {id_: list(found.reasons[id_]) for id_ in on_page if id_ in found.reasons}
    hidden = [id_ for id_ in found.hidden_message_ids if id_ in on_page]
    for message in in_order(list(page)):
        if message.id not in seen:
            hidden.append(message.id)
            reasons[message.id] = [before_window(boundary) if boundary else "not in the model's input"]
    seqs = {message.id: message.seq for message in page}
    return Diagnostics(
        hidden_message_ids=sorted(hidden, key=seqs.__getitem__),
        truncated_message_ids=[id_ for id_ in found.truncated_message_ids if id_ in on_page],
        applied_compact_boundary_id=boundary,
        injected_notes=list(found.injected_notes),
        repairs=[repair for repair in found.repairs if not repair.message_ids or on_page & set(repair.message_ids)],
        reasons=reasons,
    )
