"""``ChatMessage``: the provider-neutral message, in the AI SDK ModelMessage shape (camelCase keys).

These types describe what the serializer hands to the adapters and what the ``ai-sdk`` target emits. They
must never grow keys the AI SDK does not define: a ChatMessage is sent as it is to the AI SDK.
Content is always a list of parts (the SDK also takes a bare string; one form keeps the adapters simple),
except a system message, whose content is a string as the SDK requires.
"""

from typing import Any, Literal, NotRequired, TypedDict

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


UserPart = TextPart | ImagePart | FilePart
AssistantPart = TextPart | FilePart | ReasoningPart | ToolCallPart | ToolApprovalRequestPart
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

PART_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "providerOptions"}),
    "image": frozenset({"type", "image", "mediaType", "providerOptions"}),
    "file": frozenset({"type", "data", "mediaType", "filename", "providerOptions"}),
    "reasoning": frozenset({"type", "text", "providerOptions"}),
    "tool-call": frozenset({"type", "toolCallId", "toolName", "input", "providerOptions"}),
    "tool-result": frozenset({"type", "toolCallId", "toolName", "output", "providerOptions"}),
    "tool-approval-request": frozenset({"type", "approvalId", "toolCallId", "providerOptions"}),
    "tool-approval-response": frozenset({"type", "approvalId", "approved", "reason", "providerOptions"}),
}
"""The keys each part type may carry; anything else would be stripped by the SDK and rejected elsewhere."""

ROLE_PARTS: dict[str, frozenset[str]] = {
    "user": frozenset({"text", "image", "file"}),
    "assistant": frozenset({"text", "file", "reasoning", "tool-call", "tool-approval-request"}),
    "tool": frozenset({"tool-result", "tool-approval-response"}),
}
"""Which parts each non-system role may carry (AI SDK v5 and v6 agree on these)."""
