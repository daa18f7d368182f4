"""Request and response bodies of the sessions, messages and runs endpoints."""

import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, NotRequired, Self

from fastapi import Path
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from app.api.wire import WireModel
from app.engine.kinds import Role
from app.engine.parts import AssistantPart, SystemPart, TextLength, ToolPart, UserPart
from app.errors import InvalidInput
from app.projections.types import ProjectionContext, View
from app.providers.request_settings import parse_format, parse_variant

ADDRESSABLE = (
    r"^(?:[^\x00-\x1f\x7f/.][^\x00-\x1f\x7f/]*|\.[^\x00-\x1f\x7f/.][^\x00-\x1f\x7f/]*|\.\.[^\x00-\x1f\x7f/]+)$"
)
"""Ids are opaque, but travel in URL paths, headers and logs: control characters are refused, and so is what
a URL path cannot address: ``/`` anywhere (``%2F`` is decoded before routing) and ``.`` or ``..`` as the
whole id (clients resolve them as dot segments). Written without look-ahead, which the validator lacks."""
ClientId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        pattern=ADDRESSABLE,
        description="Opaque, unique per session; no control characters, no '/', not '.' or '..'.",
    ),
]
PathId = Annotated[str, Path(min_length=1, max_length=128, pattern=ADDRESSABLE)]
INT32_MAX = 2**31 - 1
"""Bound of every count in a request: tokens and characters fit in 32 bits, and so do the providers' fields
(Gemini's maxOutputTokens is an int32)."""
Provider = Literal["openai", "openai-responses", "anthropic", "gemini", "ai-sdk"]
Metadata = dict[str, JsonValue]
Name = Annotated[str, TextLength(1, 256)]


class ModelRefObject(TypedDict):
    """opencode's model reference, kept exactly as given."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    providerID: Name
    modelID: Name
    variant: NotRequired[Name]


ModelReference = Annotated[str, TextLength(0, 256)] | ModelRefObject
"""A model as ``provider/modelId`` (or a bare id), or opencode's ``{providerID, modelID, variant?}``."""
ToolSwitches = dict[str, bool]
"""opencode's tools map: ``{"bash": true, "edit": false, "mcp_*": false}``."""


def _checked(parse: Any) -> Any:
    """A validator that runs a core parser for its refusal and keeps the value as given."""

    def check(value: Any) -> Any:
        try:
            parse(value)
        except InvalidInput as refused:
            raise ValueError(refused.detail.removeprefix("format: ")) from None
        return value

    return AfterValidator(check)


Variant = Annotated[str | None, _checked(parse_variant)]
OutputFormatJson = Annotated[JsonValue, _checked(parse_format)]


def _storable(value: datetime) -> datetime:
    """A time that stays a time in UTC: ``0001-01-01T00:00:00+14:00`` is a valid RFC 3339 time that falls
    before year 1 in UTC, where neither Python nor the database's driver can follow it."""
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise ValueError("a time within the years 1 to 9999 in UTC") from None
    return value


def _finite(value: datetime) -> datetime:
    """A time the database keeps as that time: the driver writes Python's first and last instants as
    ``-infinity`` and ``infinity``, which no time arithmetic takes."""
    if value.astimezone(UTC).replace(tzinfo=None) in (datetime.min, datetime.max):
        raise ValueError("a time after 0001-01-01T00:00:00Z and before 9999-12-31T23:59:59.999999Z")
    return value


Instant = Annotated[AwareDatetime, AfterValidator(_storable)]
"""Every time a request gives: with a zone, and within the years UTC can spell."""
StoredInstant = Annotated[Instant, AfterValidator(_finite)]
"""A time a message is stored with: one the database keeps as that time."""
_INSTANT: TypeAdapter[datetime] = TypeAdapter(StoredInstant)


def _instant(value: object) -> datetime:
    """opencode's times: milliseconds since the epoch (a number), or RFC 3339 text with a zone."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            moment = datetime.fromtimestamp(value / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError("epoch milliseconds within the years 1 to 9999") from None
        return _finite(moment)
    return _INSTANT.validate_python(value)


def _date_time_text(value: object) -> object:
    """A query's time is RFC 3339 text: pydantic would also read a bare number as Unix time."""
    if isinstance(value, str) and not re.match(r"^\d{4}-\d{2}-\d{2}", value):
        raise ValueError("an RFC 3339 date-time, such as 2026-12-01T09:00:00Z")
    return value


QueryTime = Annotated[Instant, BeforeValidator(_date_time_text)]


class _MessageIn(WireModel):
    id: ClientId | None = None
    run_id: ClientId | None = None
    metadata: Metadata = Field(default_factory=dict)
    created_at: StoredInstant | None = Field(
        default=None, description="When it happened (RFC 3339, or epoch milliseconds); default now."
    )
    time: dict[str, JsonValue] | None = Field(
        default=None,
        description="opencode's time object: created (epoch milliseconds or RFC 3339) sets createdAt; the whole "
        "object is kept as metadata.time.",
    )

    @field_validator("time")
    @classmethod
    def _time_has_created(cls, time: dict[str, JsonValue] | None) -> dict[str, JsonValue] | None:
        if time is not None:
            try:
                _instant(time.get("created"))
            except (ValidationError, ValueError):
                raise ValueError(
                    "time.created must be epoch milliseconds or an RFC 3339 time with a zone, within the years 1 to "
                    "9999 in UTC"
                ) from None
        return time

    @model_validator(mode="after")
    def _time_is_when_it_happened(self) -> Self:
        if self.time is None:
            return self
        created = _instant(self.time["created"])
        if self.created_at is not None and self.created_at != created:
            raise ValueError("time.created and createdAt name different times")
        if self.metadata.get("time", self.time) != self.time:
            raise ValueError("time and metadata.time differ")
        self.created_at = created
        self.metadata = {**self.metadata, "time": self.time}
        return self


class SystemMessageIn(_MessageIn):
    role: Literal["system"]
    content: str | list[SystemPart]


class UserMessageIn(_MessageIn):
    role: Literal["user"]
    content: str | list[UserPart]


class AssistantMessageIn(_MessageIn):
    role: Literal["assistant"]
    content: str | list[AssistantPart]


class ToolMessageIn(_MessageIn):
    role: Literal["tool"]
    content: Annotated[list[ToolPart], Field(min_length=1)]


MessageInBody = SystemMessageIn | UserMessageIn | AssistantMessageIn | ToolMessageIn
MessageIn = Annotated[MessageInBody, Field(discriminator="role")]


class AppendMessagesRequest(WireModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "messages": [
                        {"id": "m1", "role": "user", "content": "Why does the build fail?"},
                        {
                            "id": "m2",
                            "role": "assistant",
                            "content": [
                                {"type": "text", "text": "Let me read the log."},
                                {
                                    "type": "tool-call",
                                    "toolCallId": "call_1",
                                    "toolName": "read_file",
                                    "input": {"path": "build.log"},
                                },
                            ],
                        },
                        {
                            "id": "m3",
                            "role": "tool",
                            "content": [
                                {
                                    "type": "tool-result",
                                    "toolCallId": "call_1",
                                    "toolName": "read_file",
                                    "output": {"type": "text", "value": "error: missing semicolon"},
                                }
                            ],
                        },
                    ]
                }
            ]
        }
    )

    messages: Annotated[list[MessageIn], Field(min_length=1)]


class MessageOut(WireModel):
    id: str
    session_id: str
    seq: int
    role: Role
    kind: str
    content: str | list[dict[str, Any]]
    metadata: dict[str, Any]
    run_id: str | None
    created_at: datetime
    token_estimate: int


class MessagesOut(WireModel):
    messages: list[MessageOut]


class MessagePage(WireModel):
    messages: list[MessageOut]
    next_cursor: str | None
    has_more: bool


class PatchMessageRequest(WireModel):
    metadata: Metadata = Field(description="Merged shallowly; a null value removes the key.")


class CreateSessionRequest(WireModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "s1",
                    "title": "Fix the build",
                    "model": "anthropic/claude-sonnet-4-5",
                    "contextWindowTokens": 200_000,
                }
            ]
        }
    )

    id: ClientId | None = None
    title: Annotated[str, TextLength(0, 1000)] | None = None
    metadata: Metadata = Field(default_factory=dict)
    model: ModelReference | None = Field(default=None, description="provider/modelId or {providerID, modelID}")
    context_window_tokens: int | None = Field(default=None, gt=0, le=INT32_MAX)


class SessionOut(WireModel):
    id: str
    title: str | None
    metadata: dict[str, Any]
    model: str | dict[str, Any] | None
    context_window_tokens: int | None
    last_seq: int
    message_count: int
    created_at: datetime
    updated_at: datetime


class SessionPage(WireModel):
    sessions: list[SessionOut]
    next_cursor: str | None
    has_more: bool


class CreateRunRequest(WireModel):
    id: ClientId | None = None
    agent: str | None = None
    model: ModelReference | None = None
    system: str | None = None
    tools: list[dict[str, JsonValue]] | ToolSwitches | None = Field(
        default=None, description="AI SDK tool definitions, or opencode's map of tools turned on and off."
    )
    variant: Variant = Field(
        default=None, description="Reasoning effort (none, minimal, low, medium, high, xhigh, max) or a budget."
    )
    format: OutputFormatJson = Field(
        default=None, description='{"type": "text"} or {"type": "json_schema", "schema": {...}, "name"?, "strict"?}'
    )
    metadata: Metadata = Field(default_factory=dict)


class PatchRunRequest(WireModel):
    usage: dict[str, JsonValue] | None = None
    result: JsonValue = None
    metadata: Metadata = Field(default_factory=dict, description="Merged shallowly; a null value removes the key.")


class RunOut(WireModel):
    id: str
    session_id: str
    agent: str | None
    model: str | dict[str, Any] | None
    system: str | None
    tools: list[dict[str, Any]] | dict[str, bool] | None
    variant: str | None
    format: Any
    usage: dict[str, Any] | None
    result: Any
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class RunPage(WireModel):
    runs: list[RunOut]
    next_cursor: str | None
    has_more: bool


_MEDIA_RANGE = re.compile(r"[A-Za-z0-9][\w!#$&^.+-]*/(\*|[A-Za-z0-9][\w!#$&^.+-]*)")
"""A media range as HTTP's ``Accept`` spells one: ``image/png``, ``image/*``."""


class ProjectionOptions(WireModel):
    """The projection context the views take, as query parameters or as ``/chat``'s ``projection``."""

    model: str | None = Field(default=None, description="The target model id (reasoning stays native only for it).")
    provider: str | None = Field(default=None, description="The target provider.")
    include_reasoning: bool = True
    reasoning_fallback: Literal["drop", "text"] = "drop"
    include_tool_results: bool = True
    tool_result_soft_limit_chars: int = Field(
        default=50_000, ge=0, le=INT32_MAX, description="Characters of a tool result the model sees; 0 never cuts."
    )
    apply_compact_boundary: bool = True
    inject_runtime_reminder: bool = True
    readable_media: str | None = Field(
        default=None,
        description="Comma-separated media types the target reads (image/*, application/pdf); 'none' for text only.",
    )

    @field_validator("readable_media")
    @classmethod
    def _media_types(cls, value: str | None) -> str | None:
        """A misspelt type would match nothing and quietly turn every medium into text."""
        for item in (value or "").split(","):
            item = item.strip()
            if item and item not in ("none", "*", "*/*") and not _MEDIA_RANGE.fullmatch(item):
                raise ValueError(f"{item!r} is not a media type (type/subtype, type/*, * or none)")
        return value

    def to_context(self, *, provider: str | None = None, model: str | None = None) -> ProjectionContext:
        """The core's context; ``provider`` and ``model`` override the options' own (``/chat`` sets them)."""
        readable: tuple[str, ...] | None = None
        if self.readable_media is not None:
            listed = tuple(item.strip() for item in self.readable_media.split(",") if item.strip())
            readable = () if listed in ((), ("none",)) else listed
        return ProjectionContext(
            model=model or self.model,
            provider=provider or self.provider,
            include_reasoning=self.include_reasoning,
            reasoning_fallback=self.reasoning_fallback,
            include_tool_results=self.include_tool_results,
            tool_result_soft_limit_chars=self.tool_result_soft_limit_chars,
            apply_compact_boundary=self.apply_compact_boundary,
            inject_runtime_reminder=self.inject_runtime_reminder,
            readable_media=readable,
        )


class ProjectionQuery(ProjectionOptions):
    """A view and its context as query parameters, plus paging for the paged views."""

    view: View
    format: Literal["json", "markdown"] = Field(default="json", description="Export: JSON or one Markdown document.")
    redact: bool = Field(default=False, description="Export: mask secrets.")
    limit: int | None = Field(
        default=None, ge=1, description="Paged views (transcript, debug, export); at most PROJECTOR_MAX_PAGE_SIZE."
    )
    after: str | None = None
    before: str | None = None
    order: Literal["asc", "desc"] = "asc"

    @field_validator("format", "redact")
    @classmethod
    def _export_only(cls, value: str | bool, info: ValidationInfo) -> str | bool:
        """The export's own options, refused elsewhere rather than accepted and ignored."""
        if value not in ("json", False) and info.data.get("view") is not View.EXPORT:
            raise ValueError("only the export view takes it")
        return value

    @field_validator("limit", "after", "before", "order")
    @classmethod
    def _paged_views_only(cls, value: int | str | None, info: ValidationInfo) -> int | str | None:
        """The model and compact views are the whole window, never a page: paging them is refused rather
        than accepted and ignored."""
        if value not in (None, "asc") and info.data.get("view") in (View.MODEL, View.COMPACT):
            raise ValueError("the model and compact views are the whole window and do not page")
        return value

    def to_context(self, *, provider: str | None = None, model: str | None = None) -> ProjectionContext:
        return replace(super().to_context(provider=provider, model=model), redact=self.redact)


class ChatRequestBody(WireModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "sessionId": "s1",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "system": "You are a careful engineer.",
                    "maxOutputTokens": 4096,
                    "tools": [
                        {
                            "name": "read_file",
                            "description": "Read a file",
                            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
                        }
                    ],
                    "mutations": [
                        {"op": "appendTo", "target": "last-user", "parts": [{"type": "text", "text": "Be brief."}]}
                    ],
                }
            ]
        }
    )

    session_id: ClientId
    run_id: ClientId | None = Field(
        default=None, description="Supplies the run's model, system, tools, variant, format and agent."
    )
    provider: Provider = Field(description="The payload's target: Chat Completions, Responses, Messages, ...")
    model: str | None = Field(default=None, description="The provider's model id; from the run when omitted.")
    system: str | None = None
    tools: list[dict[str, JsonValue]] | None = Field(
        default=None, description="AI SDK shape: name, description, inputSchema."
    )
    projection: ProjectionOptions = Field(default_factory=ProjectionOptions)
    mutations: list[dict[str, JsonValue]] = Field(default_factory=list)
    max_output_tokens: int | None = Field(default=None, gt=0, le=INT32_MAX)
    variant: Variant = Field(
        default=None, description="Reasoning effort or thinking budget; from the run when omitted."
    )
    format: OutputFormatJson = Field(default=None, description="Structured output; from the run when omitted.")
    agent: str | None = Field(
        default=None, description="The agent this request is for, named in the answer; from the run when omitted."
    )
    prefill: bool = Field(
        default=False, description="End on the trailing assistant turn for the model to continue (Anthropic only)."
    )
    cache: JsonValue = Field(
        default="auto",
        description='Prompt caching: "auto", "none", or {"ttl": "5m"|"1h", "breakpoints": [...], "cachedContent"?}.',
    )


class ChatResponseBody(WireModel):
    provider: str
    model: str
    agent: str | None = Field(description="The agent this request is for: the request's, else the run's.")
    payload: dict[str, Any]
    diagnostics: dict[str, Any]
    context: dict[str, Any]


class ProjectedMessageOut(WireModel):
    view: View
    role: Role
    semantic_type: str
    source_message_ids: list[str]
    content: str | list[dict[str, Any]]
    metadata: dict[str, Any]


class ProjectionOut(WireModel):
    view: View
    session_id: str
    messages: list[ProjectedMessageOut]
    diagnostics: dict[str, Any]
    next_cursor: str | None = None
    has_more: bool | None = None


class ContextQuery(ProjectionOptions):
    """The model (``model``/``provider``, else the session's) and the request whose context is counted."""

    max_output_tokens: int | None = Field(default=None, gt=0, le=INT32_MAX, description="Room the answer needs.")


class ContextOut(WireModel):
    """``GET /sessions/{id}/context``: the tokens the model view sends, per section, against the window."""

    session_id: str
    model: str | None
    window: dict[str, Any] = Field(description="tokens, source (model_server, model_config, session, catalog, none)")
    sections: dict[str, int] = Field(description="system, summary, messages, toolResults, reasoning")
    estimated_tokens: int
    total_tokens: int
    basis: Literal["usage", "estimate"]
    usage: dict[str, Any] | None = Field(description="The provider usage the count starts from: messageId, tokens.")
    tokens_after_usage: int
    threshold_tokens: int | None
    remaining_tokens: int | None
    compaction_due: bool
    reason: str
    applied_compact_boundary_id: str | None
    max_output_tokens: int | None
    cache: dict[str, Any] | None = Field(description="lastCall, liveHistory, compactionInvalidatesTokens...")


class CompactionRequest(WireModel):
    summary: str | None = Field(default=None, description="Your summary; omitted: the configured summarizer writes it.")
    through_message_id: ClientId | None = Field(
        default=None, description="The last message your summary covers; omitted: the tail policy decides."
    )
    boundary_id: ClientId | None = None
    summary_id: ClientId | None = None
    trigger: Literal["manual", "auto"] = "manual"
    instructions: str | None = Field(default=None, max_length=10_000, description="Extra guidance for the summarizer.")
    projection: ProjectionOptions = Field(default_factory=ProjectionOptions)

    @field_validator("summary_id")
    @classmethod
    def _not_the_boundarys(cls, summary_id: str | None, info: ValidationInfo) -> str | None:
        if summary_id is not None and summary_id == info.data.get("boundary_id"):
            raise ValueError("the summary and its boundary are two messages: summaryId must differ from boundaryId")
        return summary_id


class CompactionOut(WireModel):
    boundary: MessageOut
    summary: MessageOut
    compaction: dict[str, Any] = Field(description="The boundary's metadata.compaction: counts and tokens.")
    tokens_after: int


class PruneRequest(WireModel):
    dry_run: bool = Field(default=False, description="Report what would be pruned, mark nothing.")
    projection: ProjectionOptions = Field(default_factory=ProjectionOptions)
    protect_user_turns: int | None = Field(default=None, ge=0, le=INT32_MAX)
    protect_tool_tokens: int | None = Field(default=None, ge=0, le=INT32_MAX)
    minimum_savings_tokens: int | None = Field(default=None, ge=0, le=INT32_MAX)
    protected_tools: list[str] | None = None


class PruneOut(WireModel):
    pruned_message_ids: list[str] = Field(description="The tool results marked (or, with dryRun, to mark).")
    tokens_saved: int
    candidate_tokens_saved: int = Field(description="What pruning every candidate would save, below the minimum too.")
    protected_tool_tokens: int
    reason: str
    cache_invalidated_tokens: int
    dry_run: bool
    marked_message_ids: list[str]


class StatusOut(WireModel):
    status: str


ImportFormat = Literal["claude-code", "opencode", "pi", "openai-chat", "anthropic-messages", "ai-sdk", "projector"]


class ImportQuery(WireModel):
    format: ImportFormat = Field(description="What wrote the file.")
    strict: bool = Field(
        default=False,
        description="A line that is not JSON or not a known record, or a message the append checks "
        "refuse, is a 422 and nothing is stored (by default it is skipped and reported).",
    )
    live: bool = Field(
        default=False,
        description="The file is still being written: store only the messages no later line can change.",
    )
    session_id: ClientId | None = Field(default=None, description="Import into this session, whatever the file says.")


class RefusedMessageOut(WireModel):
    message_id: str
    field: str
    reason: str


class SessionImportOut(WireModel):
    id: str
    created: bool
    stored: int
    stored_ids: list[str]
    already_stored: int
    changed: list[str] = Field(description="Ids stored before with other content; the stored message is kept.")
    refused: list[RefusedMessageOut]
    pending: int = Field(description="With live: messages left for the next import, as a later line may change them.")
    runs_created: list[str] = Field(description="Runs an archive brought that the session did not hold yet.")
    runs_changed: list[str] = Field(
        description="Runs of an archive the session held with other settings or ending; the stored run is kept."
    )


class LineOut(WireModel):
    line: int
    reason: str


class BranchOut(WireModel):
    first_line: int
    lines: int
    message_ids: list[str]


class ImportRepairOut(WireModel):
    line: int
    message_id: str
    detail: str


class ToolCallRefOut(WireModel):
    tool_call_id: str
    message_id: str


class ImportReportOut(WireModel):
    format: str
    skipped: list[LineOut]
    invalid: list[LineOut]
    branches: list[BranchOut]
    repairs: list[ImportRepairOut]
    unanswered_calls: list[ToolCallRefOut]
    orphan_results: list[ToolCallRefOut]


class ImportOut(WireModel):
    sessions: list[SessionImportOut]
    report: ImportReportOut
