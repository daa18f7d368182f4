"""Request and response bodies of the sessions, messages and runs endpoints."""

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, Field, JsonValue

from app.api.parts import AssistantPart, SystemPart, ToolPart, UserPart
from app.api.wire import WireModel
from app.engine.kinds import Role
from app.projections.types import View

ClientId = Annotated[str, Field(min_length=1, max_length=128, description="Opaque, unique per session.")]
Metadata = dict[str, JsonValue]


class _MessageIn(WireModel):
    id: ClientId | None = None
    run_id: ClientId | None = None
    metadata: Metadata = Field(default_factory=dict)
    created_at: AwareDatetime | None = Field(default=None, description="When it happened; default now.")


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


MessageIn = Annotated[SystemMessageIn | UserMessageIn | AssistantMessageIn | ToolMessageIn, Field(discriminator="role")]


class AppendMessagesRequest(WireModel):
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
    id: ClientId | None = None
    title: str | None = Field(default=None, max_length=1000)
    metadata: Metadata = Field(default_factory=dict)
    model: str | None = Field(default=None, max_length=256, description="provider/modelId")
    context_window_tokens: int | None = Field(default=None, gt=0)


class SessionOut(WireModel):
    id: str
    title: str | None
    metadata: dict[str, Any]
    model: str | None
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
    model: str | None = None
    system: str | None = None
    tools: list[dict[str, JsonValue]] | None = None
    variant: str | None = None
    format: JsonValue = None
    metadata: Metadata = Field(default_factory=dict)


class PatchRunRequest(WireModel):
    usage: dict[str, JsonValue] | None = None
    result: JsonValue = None
    metadata: Metadata | None = None


class RunOut(WireModel):
    id: str
    session_id: str
    agent: str | None
    model: str | None
    system: str | None
    tools: list[dict[str, Any]] | None
    variant: str | None
    format: Any
    usage: dict[str, Any] | None
    result: Any
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class ProjectionQuery(WireModel):
    """The projection context as query parameters (DESIGN section 4), plus paging for the paged views."""

    view: View
    active_agent_name: str | None = None
    model: str | None = Field(default=None, description="The target model id (reasoning stays native only for it).")
    provider: str | None = Field(default=None, description="The target provider.")
    include_reasoning: bool = True
    reasoning_fallback: Literal["drop", "text"] = "drop"
    include_tool_results: bool = True
    tool_result_soft_limit_chars: int = Field(default=50_000, ge=1)
    apply_compact_boundary: bool = True
    inject_runtime_reminder: bool = True
    readable_media: str | None = Field(
        default=None,
        description="Comma-separated media types the target reads (image/*, application/pdf); 'none' for text only.",
    )
    redact: bool = Field(default=False, description="Export: mask secrets.")
    format: Literal["json", "markdown"] = Field(default="json", description="Export: JSON or one Markdown document.")
    limit: int | None = Field(default=None, ge=1, description="Paged views (transcript, debug, export).")
    after: str | None = None
    before: str | None = None
    order: Literal["asc", "desc"] = "asc"


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
