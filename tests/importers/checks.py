"""What every import must pass, whatever its format: the append endpoint takes its messages, every tool call
is answered or reported, every view lists what it should, and every provider accepts the ``/chat`` payload.

``append_problems`` validates one message at a time, so a failure names the message; it also runs the
write-time storability check (integers past 64 bits, nesting past the limit; any text is storable).
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from app.api.schemas import AppendMessagesRequest
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote_all
from app.errors import InvalidInput
from app.importers.imported import ImportedMessage, ImportedSession, ImportResult
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from app.providers.chat_request import build_chat_request
from app.providers.registry import SUPPORTED_PROVIDERS
from app.settings import Settings
from app.store.storable import storable_size
from tests.providers.payload_check import problems

FALLBACK = datetime(2026, 1, 1, tzinfo=UTC)
MODELS = {
    "openai": "gpt-5",
    "openai-responses": "gpt-5",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-3-pro-preview",
    "ai-sdk": "anthropic/claude-sonnet-4-5",
}
"""A target model per provider; the Anthropic target is the session's own model when it names one."""
MAX_JSON_DEPTH: int = Settings.model_fields["max_json_depth"].default
"""The nesting the service refuses past unless configured otherwise."""
TOOLS = [{"name": "Read", "description": "Read a file", "inputSchema": {"type": "object"}}]


def append_problems(session: ImportedSession) -> list[str]:
    found: list[str] = []
    for message in session.messages:
        body = {"messages": [message.to_append()]}
        try:
            AppendMessagesRequest.model_validate(body)
        except ValidationError as error:
            reasons = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()]
            found.append(f"{message.id}: {'; '.join(reasons)}")
        try:
            storable_size(message.content, "content", MAX_JSON_DEPTH)
            storable_size(message.metadata, "metadata", MAX_JSON_DEPTH)
        except InvalidInput as error:
            found.append(f"{message.id}: {error.detail}")
    return found


def engine_messages(session: ImportedSession) -> list[EngineMessage]:
    """The messages as the store would hand them to the core: seq 1, 2, ... in import order."""
    persisted = [
        PersistedMessage(
            id=message.id,
            session_id=session.id,
            seq=seq,
            role=message.role,
            content=message.content,
            created_at=message.created_at or FALLBACK + timedelta(seconds=seq),
            metadata=message.metadata,
        )
        for seq, message in enumerate(session.messages, start=1)
    ]
    return promote_all(persisted)


def assert_every_call_answered_or_reported(result: ImportResult) -> None:
    reported = {ref.tool_call_id for ref in result.report.unanswered_calls}
    orphans = {ref.tool_call_id for ref in result.report.orphan_results}
    for session in result.sessions:
        calls: list[str] = []
        results: set[str] = set()
        for message in session.messages:
            for part in [] if isinstance(message.content, str) else message.content:
                if part["type"] == "tool-call":
                    calls.append(part["toolCallId"])
                elif part["type"] == "tool-result":
                    assert part["toolCallId"] in calls or part["toolCallId"] in orphans, part
                    results.add(part["toolCallId"])
        assert {call for call in calls if call not in results} == reported
        assert len(calls) == len(set(calls)), "a tool call id repeats"


def assert_views_hold(session: ImportedSession) -> None:
    """Every view projects; the transcript and the debug view list the imported messages in import order,
    the transcript leaving out only what it explains."""
    messages = engine_messages(session)
    ids = [message.id for message in messages]
    ctx = ProjectionContext()
    for view in View:
        project(view, messages, ctx)
    transcript = project(View.TRANSCRIPT, messages, ctx)
    shown = [message.source_message_ids[0] for message in transcript.messages]
    hidden = transcript.diagnostics.hidden_message_ids
    assert sorted(shown + hidden, key=ids.index) == ids
    assert shown == sorted(shown, key=ids.index)
    assert all(transcript.diagnostics.reasons.get(message_id) for message_id in hidden)
    debug = project(View.DEBUG, messages, ctx)
    assert [message.source_message_ids[0] for message in debug.messages] == ids


@dataclass
class PayloadRun:
    problems: list[str] = field(default_factory=list)
    ai_sdk_payloads: list[dict[str, Any]] = field(default_factory=list)


def check_payloads(session: ImportedSession, run: PayloadRun) -> None:
    """The ``/chat`` path for every provider: promote, model view for the target, serialize, adapt, check.
    The Anthropic target is the model that wrote the session when it names one, so signed thinking is
    replayed natively and its signatures are checked too."""
    messages = engine_messages(session)
    for provider in SUPPORTED_PROVIDERS:
        model = model_for(provider, session)
        projection = project(View.MODEL, messages, ProjectionContext(provider=provider, model=model))
        if not projection.messages:
            continue
        request = build_chat_request(projection, provider=provider, model=model, tools=TOOLS)
        run.problems.extend(f"{provider}: {found}" for found in problems(provider, request.payload, model=model))
        if provider == "ai-sdk":
            run.ai_sdk_payloads.append(request.payload)


def model_for(provider: str, session: ImportedSession) -> str:
    named = session.model
    if provider == "anthropic" and isinstance(named, str) and named.startswith("anthropic/"):
        return named.removeprefix("anthropic/")
    return MODELS[provider]


def conversation(session: ImportedSession) -> list[EngineMessage]:
    """The messages of the conversation itself, without runtime facts (hidden from the model as system
    notes) and switch markers."""
    return [
        message
        for message in engine_messages(session)
        if message.kind not in (Kind.AGENT_SWITCH_NOTE, Kind.MODEL_SWITCH_NOTE)
        and not (message.kind is Kind.SYSTEM_NOTE and message.metadata.get("eligibleForModelContext") is False)
    ]


def parts_of(session: ImportedSession, part_type: str) -> list[dict[str, Any]]:
    return [
        part
        for message in session.messages
        if not isinstance(message.content, str)
        for part in message.content
        if part.get("type") == part_type
    ]


def parts(message: ImportedMessage) -> list[dict[str, Any]]:
    """A message's content as parts (a test that reads parts asserts the message has them)."""
    assert isinstance(message.content, list), message
    return message.content
