"""``ChatMessage``: the provider-neutral message, in the AI SDK ModelMessage shape (camelCase keys).

These types describe what the serializer hands to the adapters and what the ``ai-sdk`` target emits. They
must never grow keys the AI SDK does not define: a ChatMessage is sent as it is to the AI SDK. The tables the
serializer checks parts against at run time are read from the stored part shapes (``app.engine.parts``).
Content is always a list of parts (the SDK also takes a bare string; one form keeps the adapters simple),
except a system message, whose content is a string as the SDK requires.
"""

from typing import Any, Literal, NotRequired, TypedDict

from app.engine.parts import AssistantPart as AssistantPartModel
from app.engine.parts import PartModel, part_models, part_type
from app.engine.parts import SystemPart as SystemPartModel
from app.engine.parts import ToolPart as ToolPartModel
from app.engine.parts import UserPart as UserPartModel

ProviderOptions = dict[str, dict[str, Any]]
"""Per-provider extras, e.g. ``{"anthropic": {"signature": ...}}``; kept exactly as the provider returned them."""


class TextPart(TypedDict):
    type: Literal["text"]
    text: str
    providerOptions: NotRequired[ProviderOptions]


class ImagePart(TypedDict):
    type: Literal["image"]
    image: str
    """Base64, a data URL or an http(s) URL."""
    mediaType: NotRequired[str]
    providerOptions: NotRequired[ProviderOptions]


class FilePart(TypedDict):
    type: Literal["file"]
    data: str
    mediaType: str
    filename: NotRequired[str]
    providerOptions: NotRequired[ProviderOptions]


class ReasoningPart(TypedDict):
    type: Literal["reasoning"]
    text: str
    providerOptions: NotRequired[ProviderOptions]


class ToolCallPart(TypedDict):
    type: Literal["tool-call"]
    toolCallId: str
    toolName: str
    input: Any
    providerOptions: NotRequired[ProviderOptions]
    providerExecuted: NotRequired[bool]
    """The provider ran the tool itself: its result follows in the same assistant message, not in a tool one."""


class ToolResultOutput(TypedDict):
    type: Literal["text", "json", "error-text", "error-json", "content", "execution-denied"]
    value: NotRequired[Any]
    reason: NotRequired[str]


class ToolResultPart(TypedDict):
    type: Literal["tool-result"]
    toolCallId: str
    toolName: str
    output: ToolResultOutput
    providerOptions: NotRequired[ProviderOptions]
    providerExecuted: NotRequired[bool]


class ToolApprovalRequestPart(TypedDict):
    type: Literal["tool-approval-request"]
    approvalId: str
    toolCallId: str
    providerOptions: NotRequired[ProviderOptions]


class ToolApprovalResponsePart(TypedDict):
    type: Literal["tool-approval-response"]
    approvalId: str
    approved: bool
    reason: NotRequired[str]
    providerOptions: NotRequired[ProviderOptions]
    providerExecuted: NotRequired[bool]


UserPart = TextPart | ImagePart | FilePart
AssistantPart = TextPart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart | ToolApprovalRequestPart
ToolPart = ToolResultPart | ToolApprovalResponsePart
Part = UserPart | AssistantPart | ToolPart


class SystemChatMessage(TypedDict):
    role: Literal["system"]
    content: str
    providerOptions: NotRequired[ProviderOptions]


class UserChatMessage(TypedDict):
    role: Literal["user"]
    content: list[UserPart]
    providerOptions: NotRequired[ProviderOptions]


class AssistantChatMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AssistantPart]
    providerOptions: NotRequired[ProviderOptions]


class ToolChatMessage(TypedDict):
    role: Literal["tool"]
    content: list[ToolPart]
    providerOptions: NotRequired[ProviderOptions]


ChatMessage = SystemChatMessage | UserChatMessage | AssistantChatMessage | ToolChatMessage

_CARRIED_BY_ROLE = {"user": UserPartModel, "assistant": AssistantPartModel, "tool": ToolPartModel}


def _keys(model: type[PartModel]) -> frozenset[str]:
    return frozenset(field.alias or name for name, field in model.model_fields.items())


def _required_strings(model: type[PartModel]) -> tuple[str, ...]:
    fields = model.model_fields.items()
    return tuple(field.alias or name for name, field in fields if field.is_required() and field.annotation is str)


_MODELS = {
    part_type(model): model
    for union in (SystemPartModel, UserPartModel, AssistantPartModel, ToolPartModel)
    for model in part_models(union)
}
PART_KEYS: dict[str, frozenset[str]] = {name: _keys(model) for name, model in _MODELS.items()}
"""The keys each part type declares (the stored part shapes). A stored part may hold more (keys a newer SDK
added, kept verbatim); they are not sent: the SDK would strip them, other providers reject them."""

REQUIRED_STRINGS: dict[str, tuple[str, ...]] = {name: _required_strings(model) for name, model in _MODELS.items()}
"""The keys each part type must hold as strings (its required text fields); a part without one is malformed."""

ROLE_PARTS: dict[str, frozenset[str]] = {
    role: frozenset(map(part_type, part_models(union))) for role, union in _CARRIED_BY_ROLE.items()
}
"""Which parts each non-system role may carry: what it may be stored with."""
