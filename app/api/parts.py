"""Content parts as clients write them: the AI SDK ModelMessage part shapes, validated per role.

Which parts a role may carry is encoded in the types (``UserPart``, ``AssistantPart``...), so a wrong part
fails validation with the path of the offending field instead of being stored and breaking a payload later.
"""

from typing import Annotated, Literal

from pydantic import Field, JsonValue

from app.api.wire import TextLength, WireModel

ProviderOptions = dict[str, dict[str, JsonValue]]
Id = Annotated[str, TextLength(1, 1024)]
ToolName = Annotated[str, TextLength(1, 256)]


class _Part(WireModel):
    provider_options: ProviderOptions | None = None


class TextPart(_Part):
    type: Literal["text"]
    text: str


class ImagePart(_Part):
    type: Literal["image"]
    image: str = Field(description="Base64 data, a data: URL or an http(s) URL.")
    media_type: str | None = None


class FilePart(_Part):
    type: Literal["file"]
    data: str = Field(description="Base64 data, a data: URL or an http(s) URL.")
    media_type: str
    filename: str | None = None


class ReasoningPart(_Part):
    type: Literal["reasoning"]
    text: str


class ToolCallPart(_Part):
    type: Literal["tool-call"]
    tool_call_id: Id
    tool_name: ToolName
    input: JsonValue
    provider_executed: bool | None = None


class _OutputItem(WireModel):
    provider_options: ProviderOptions | None = None


class TextItem(_OutputItem):
    type: Literal["text"]
    text: str


class MediaItem(_OutputItem):
    type: Literal["media", "image-data", "file-data"]
    data: str
    media_type: str
    filename: str | None = None


class UrlItem(_OutputItem):
    type: Literal["image-url", "file-url"]
    url: str


class FileIdItem(_OutputItem):
    type: Literal["file-id", "image-file-id"]
    file_id: str | dict[str, str]


class CustomItem(_OutputItem):
    type: Literal["custom"]


OutputItem = Annotated[TextItem | MediaItem | UrlItem | FileIdItem | CustomItem, Field(discriminator="type")]


class TextOutput(WireModel):
    type: Literal["text", "error-text"]
    value: str
    provider_options: ProviderOptions | None = None


class JsonOutput(WireModel):
    type: Literal["json", "error-json"]
    value: JsonValue
    provider_options: ProviderOptions | None = None


class DeniedOutput(WireModel):
    type: Literal["execution-denied"]
    reason: str | None = None
    provider_options: ProviderOptions | None = None


class ContentOutput(WireModel):
    type: Literal["content"]
    value: list[OutputItem]


ToolResultOutput = Annotated[TextOutput | JsonOutput | DeniedOutput | ContentOutput, Field(discriminator="type")]


class ToolResultPart(_Part):
    type: Literal["tool-result"]
    tool_call_id: Id
    tool_name: ToolName
    output: ToolResultOutput
    provider_executed: bool | None = None


class ToolApprovalRequestPart(_Part):
    type: Literal["tool-approval-request"]
    approval_id: Id
    tool_call_id: Id


class ToolApprovalResponsePart(_Part):
    type: Literal["tool-approval-response"]
    approval_id: Id
    approved: bool
    reason: str | None = None
    provider_executed: bool | None = None


SystemPart = Annotated[TextPart, Field(discriminator="type")]
UserPart = Annotated[TextPart | ImagePart | FilePart, Field(discriminator="type")]
AssistantPart = Annotated[
    TextPart | ReasoningPart | ToolCallPart | ToolApprovalRequestPart, Field(discriminator="type")
]
ToolPart = Annotated[ToolResultPart | ToolApprovalResponsePart, Field(discriminator="type")]
