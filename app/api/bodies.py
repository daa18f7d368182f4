"""Wire bodies to the services' inputs, and stored records and core values back to wire bodies (camelCase plain
dicts), built directly so hot reads skip model validation."""

from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import TypeAdapter, ValidationError

from app.api.problems import validation_errors
from app.api.schemas import (
    AppendMessagesRequest,
    ChatRequestBody,
    ClientId,
    CreateRunRequest,
    CreateSessionRequest,
    MessageIn,
    MessageInBody,
    ModelRefObject,
    PatchRunRequest,
)
from app.context.cache_report import PrefixBreak
from app.engine.timestamps import from_iso
from app.errors import InvalidInput
from app.importers.imported import ToolCallRef
from app.projections.types import Diagnostics, ProjectedMessage, ProjectedMetadata
from app.providers.caching import check_cached_content, parse_cache
from app.services.chat import ChatAsk
from app.services.compaction import Compacted
from app.services.imports import ImportOutcome, RunToImport, WireReaders
from app.services.intake import MessageInput
from app.store.records import MessageRecord, RunRecord, SessionRecord


def message_inputs(request: AppendMessagesRequest) -> list[MessageInput]:
    """The messages as given, their parts as plain dicts with only the keys the caller set."""
    return [_message_input(message) for message in request.messages]


def _message_input(message: MessageInBody) -> MessageInput:
    return MessageInput(
        role=message.role,
        content=(
            message.content
            if isinstance(message.content, str)
            # Python mode: pydantic's JSON mode spells an unpaired surrogate in a key as three other
            # characters, and the parts hold nothing but JSON values either way.
            else [part.model_dump(exclude_unset=True) for part in message.content]
        ),
        id=message.id,
        metadata=message.metadata,
        run_id=message.run_id,
        created_at=message.created_at,
    )


_MESSAGE_IN: TypeAdapter[MessageInBody] = TypeAdapter(MessageIn)
_SESSION_ID: TypeAdapter[str] = TypeAdapter(ClientId)


def _read(adapter: TypeAdapter[Any], value: Any, prefix: str) -> Any:
    try:
        return adapter.validate_python(value)
    except ValidationError as error:
        errors = validation_errors(RequestValidationError(error.errors(), body=value))
        first = errors[0] if errors else {"field": "", "message": "invalid"}
        where = ".".join(filter(None, (prefix, first["field"] if first["field"] != "body" else "")))
        raise InvalidInput(f"{where}: {first['message']}", field=where) from None


_RUN_IN: TypeAdapter[CreateRunRequest] = TypeAdapter(CreateRunRequest)
CREATE_RUN_FIELDS = tuple(CreateRunRequest.model_fields)
_RUN_END: TypeAdapter[PatchRunRequest] = TypeAdapter(PatchRunRequest)


def _run_to_import(body: dict[str, Any]) -> RunToImport:
    """An archived run read as ``POST /runs`` reads its settings and ``PATCH`` how it ended."""
    created = _read(_RUN_IN, {key: body[key] for key in CREATE_RUN_FIELDS if key in body}, "run")
    ending = {key: body[key] for key in ("usage", "result") if body.get(key) is not None}
    ended = _read(_RUN_END, ending, "run")
    return RunToImport(
        str(created.id),
        created.model_dump(exclude={"id"}),
        ended.model_dump(exclude_unset=True, exclude={"metadata"}),
        from_iso(body.get("createdAt")),
    )


_SESSION_IN: TypeAdapter[CreateSessionRequest] = TypeAdapter(CreateSessionRequest)

IMPORT_READERS = WireReaders(
    message=lambda body: _message_input(_read(_MESSAGE_IN, body, "")),
    session_id=lambda value: str(_read(_SESSION_ID, value, "sessionId")),
    run=_run_to_import,
    session=lambda body: _read(_SESSION_IN, body, "session").model_dump(exclude={"id"}, by_alias=False),
)
"""An imported message is checked exactly as an appended one, a session id as a client-given one, and an
archived run as a created one."""


def chat_ask(body: ChatRequestBody) -> ChatAsk:
    """What a ``/chat`` body asks; what it leaves out the service takes from the run, then the session. A
    malformed ``cache`` is refused here, naming its field (``cache.ttl``), and so is a system prompt or tools
    asked beside a Gemini ``cachedContent``, which holds its own."""
    cache = parse_cache(body.cache)
    check_cached_content(body.provider, cache, system=body.system, tools=body.tools)
    return ChatAsk(
        session_id=body.session_id,
        provider=body.provider,
        ctx=body.projection.to_context(),
        run_id=body.run_id,
        model=body.model,
        system=body.system,
        tools=body.tools,
        mutations=body.mutations,
        max_output_tokens=body.max_output_tokens,
        variant=body.variant,
        format=body.format,
        agent=body.agent,
        prefill=body.prefill,
        cache=cache,
    )


def message_body(row: MessageRecord) -> dict[str, Any]:
    return {
        "id": row.id,
        "sessionId": row.session_id,
        "seq": row.seq,
        "role": row.role,
        "kind": row.kind,
        "content": row.content,
        "metadata": row.metadata,
        "runId": row.run_id,
        "createdAt": row.created_at,
        "tokenEstimate": row.token_estimate,
    }


MODEL_REF_KEYS = tuple(ModelRefObject.__annotations__)
"""opencode's model reference's members in the order it writes them."""


def model_as_written(model: Any) -> Any:
    """A stored model reference as it was written: ``jsonb`` keeps an object's members in an order of its
    own (``modelID`` before ``providerID``), and opencode's objects have one order (any other member after)."""
    if not isinstance(model, dict):
        return model
    return {**{key: model[key] for key in MODEL_REF_KEYS if key in model}, **model}


def session_body(row: SessionRecord) -> dict[str, Any]:
    return {
        "id": row.id,
        "title": row.title,
        "metadata": row.metadata,
        "model": model_as_written(row.model),
        "contextWindowTokens": row.context_window_tokens,
        "lastSeq": row.last_seq,
        # Messages are never deleted and seq is gap-free from 1, so the count is the last seq.
        "messageCount": row.last_seq,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    }


def run_body(row: RunRecord) -> dict[str, Any]:
    return {
        "id": row.id,
        "sessionId": row.session_id,
        "agent": row.agent,
        "model": model_as_written(row.model),
        "system": row.system,
        "tools": row.tools,
        "variant": row.variant,
        "format": row.format,
        "usage": row.usage,
        "result": row.result,
        "metadata": row.metadata,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    }


def compaction_body(done: Compacted) -> dict[str, Any]:
    return {
        "boundary": message_body(done.boundary),
        "summary": message_body(done.summary),
        "compaction": done.record,
        "tokensAfter": done.tokens_after,
    }


def projected_bodies(messages: list[ProjectedMessage]) -> list[dict[str, Any]]:
    """Each message's body; a metadata value the projection shares between messages is written once and
    shared in the body too (the encoder writes it out at every place). Enums and tuples go to orjson as they
    are (it writes an enum's value and a tuple as an array): a model view has one of these per message."""
    written: dict[int, dict[str, Any]] = {}
    bodies = []
    for message in messages:
        meta = message.metadata
        metadata = written.get(id(meta))
        if metadata is None:
            metadata = written[id(meta)] = projected_metadata_body(meta)
        bodies.append(_projected_body(message, metadata))
    return bodies


def projected_metadata_body(meta: ProjectedMetadata) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "hiddenFromTranscript": meta.hidden_from_transcript,
        "hiddenFromModel": meta.hidden_from_model,
        "truncated": meta.truncated,
        "compacted": meta.compacted,
        "notes": meta.notes,
    }
    if meta.extra:
        metadata["extra"] = meta.extra
    return metadata


def _projected_body(message: ProjectedMessage, metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        "view": message.view,
        "role": message.role,
        "semanticType": message.semantic_type,
        "sourceMessageIds": message.source_message_ids,
        "content": message.content,
        "metadata": metadata,
    }


def chat_diagnostics_body(diagnostics: Diagnostics, prefix_break: PrefixBreak | None) -> dict[str, Any]:
    """``/chat``'s diagnostics: the projection's, and what broke the previous request's prefix (``prefixBreak``)."""
    return {**diagnostics_body(diagnostics), "prefixBreak": None if prefix_break is None else prefix_break.as_dict()}


def diagnostics_body(diagnostics: Diagnostics) -> dict[str, Any]:
    return {
        "hiddenMessageIds": diagnostics.hidden_message_ids,
        "truncatedMessageIds": diagnostics.truncated_message_ids,
        "appliedCompactBoundaryId": diagnostics.applied_compact_boundary_id,
        "injectedNotes": diagnostics.injected_notes,
        "repairs": [
            {"rule": repair.rule, "detail": repair.detail, "messageIds": list(repair.message_ids)}
            for repair in diagnostics.repairs
        ],
        "reasons": diagnostics.reasons,
    }


def import_body(outcome: ImportOutcome) -> dict[str, Any]:
    report = outcome.report
    return {
        "sessions": [
            {
                "id": session.id,
                "created": session.created,
                "stored": len(session.stored),
                "storedIds": session.stored,
                "alreadyStored": session.already_stored,
                "changed": session.changed,
                "refused": [
                    {"messageId": refused.message_id, "field": refused.field, "reason": refused.reason}
                    for refused in session.refused
                ],
                "pending": session.pending,
                "runsCreated": session.runs_created,
                "runsChanged": session.runs_changed,
            }
            for session in outcome.sessions
        ],
        "report": {
            "format": report.format,
            "skipped": [{"line": line.line, "reason": line.reason} for line in report.skipped],
            "invalid": [{"line": line.line, "reason": line.reason} for line in report.invalid],
            "branches": [
                {"firstLine": branch.first_line, "lines": branch.lines, "messageIds": list(branch.message_ids)}
                for branch in report.branches
            ],
            "repairs": [
                {"line": repair.line, "messageId": repair.message_id, "detail": repair.detail}
                for repair in report.repairs
            ],
            "unansweredCalls": [_call_ref(ref) for ref in report.unanswered_calls],
            "orphanResults": [_call_ref(ref) for ref in report.orphan_results],
        },
    }


def _call_ref(ref: ToolCallRef) -> dict[str, str]:
    return {"toolCallId": ref.tool_call_id, "messageId": ref.message_id}
