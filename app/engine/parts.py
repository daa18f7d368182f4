"""Content parts: the AI SDK ModelMessage part shapes, described once for everything that reads them.

Messages are stored with these shapes (camelCase keys), appended messages and prompt mutations are validated
against them, and the serializer reads from them which keys each part type carries and which must be
strings. Which parts a role may carry is encoded in the types (``UserPart``, ``AssistantPart``...), so a
wrong part fails validation with the path of the offending field instead of being stored and breaking a
payload later. A new part type is one model here, added to the unions of the roles that carry it.

The set is the AI SDK v6 one: assistant ``file`` parts (generated images), the calls of tools the provider
ran itself (``providerExecuted``) with their ``tool-result`` inside the assistant's content, approvals, and
``providerOptions`` on every part. A key a part does not declare (a field a newer SDK version added) is kept
verbatim as long as it holds JSON (``PART_CONFIG``): a store must not lose what a runtime wrote. Such keys
never reach a provider payload on their own: the serializer sends the declared keys only.
"""

from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, GetJsonSchemaHandler, JsonValue
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

WIRE_CONFIG = ConfigDict(
    alias_generator=to_camel, populate_by_name=True, extra="forbid", serialize_by_alias=True, allow_inf_nan=False
)
"""Every wire model's configuration: camelCase over the wire, snake_case in Python, unknown fields refused, and
NaN and Infinity (which Python's JSON reader accepts, and PostgreSQL would store as null) refused."""


@dataclass(frozen=True, slots=True)
class TextLength:
    """``Annotated[str, TextLength(1, 1024)]``: a string of ``min_length`` to ``max_length`` characters,
    counted in Python. pydantic's own length constraints refuse a string holding an unpaired UTF-16 surrogate,
    which is stored like any other text; this gives the same error types and the same schema."""

    min_length: int
    max_length: int

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["maxLength"] = self.max_length
        if self.min_length:
            json_schema["minLength"] = self.min_length
        return json_schema

    def _check(self, value: str) -> str:
        if len(value) < self.min_length:
            message = "String should have at least {min_length} characters"
            raise PydanticCustomError("string_too_short", message, {"min_length": self.min_length})
        if len(value) > self.max_length:
            message = "String should have at most {max_length} characters"
            raise PydanticCustomError("string_too_long", message, {"max_length": self.max_length})
        return value


PART_CONFIG = ConfigDict(**{**WIRE_CONFIG, "extra": "allow"})
"""A part's configuration: the wire one, except that keys it does not declare are kept (as JSON values, the
type ``__pydantic_extra__`` gives them) instead of refused."""

ProviderOptions = dict[str, dict[str, JsonValue]]
Id = Annotated[str, TextLength(1, 1024)]
ToolName = Annotated[str, TextLength(1, 256)]


class _Shape(BaseModel):
    """Every stored shape inside content: its unknown keys kept, each a JSON value."""

    model_config = PART_CONFIG
    __pydantic_extra__: dict[str, JsonValue] = Field(init=False)


class PartModel(_Shape):
    provider_options: ProviderOptions | None = None


class TextPart(PartModel):
    type: Literal["text"]
    text: str


class ImagePart(PartModel):
    type: Literal["image"]
    image: str = Field(description="Base64 data, a data: URL or an http(s) URL.")
    media_type: str | None = None


class FilePart(PartModel):
    type: Literal["file"]
    data: str = Field(description="Base64 data, a data: URL or an http(s) URL.")
    media_type: str
    filename: str | None = None


class ReasoningPart(PartModel):
    type: Literal["reasoning"]
    text: str


class ToolCallPart(PartModel):
    type: Literal["tool-call"]
    tool_call_id: Id
    tool_name: ToolName
    input: JsonValue
    provider_executed: bool | None = None


class _OutputItem(_Shape):
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
    media_type: str | None = None


class FileIdItem(_OutputItem):
    type: Literal["file-id", "image-file-id"]
    file_id: str | dict[str, str]


class CustomItem(_OutputItem):
    type: Literal["custom"]


OutputItem = Annotated[TextItem | MediaItem | UrlItem | FileIdItem | CustomItem, Field(discriminator="type")]


class TextOutput(_Shape):
    type: Literal["text", "error-text"]
    value: str
    provider_options: ProviderOptions | None = None


class JsonOutput(_Shape):
    type: Literal["json", "error-json"]
    value: JsonValue
    provider_options: ProviderOptions | None = None


class DeniedOutput(_Shape):
    type: Literal["execution-denied"]
    reason: str | None = None
    provider_options: ProviderOptions | None = None


class ContentOutput(_Shape):
    type: Literal["content"]
    value: list[OutputItem]


ToolResultOutput = Annotated[TextOutput | JsonOutput | DeniedOutput | ContentOutput, Field(discriminator="type")]


class ToolResultPart(PartModel):
    type: Literal["tool-result"]
    tool_call_id: Id
    tool_name: ToolName
    output: ToolResultOutput
    provider_executed: bool | None = None


class ToolApprovalRequestPart(PartModel):
    type: Literal["tool-approval-request"]
    approval_id: Id
    tool_call_id: Id


class ToolApprovalResponsePart(PartModel):
    type: Literal["tool-approval-response"]
    approval_id: Id
    approved: bool
    reason: str | None = None
    provider_executed: bool | None = None


SystemPart = Annotated[TextPart, Field(discriminator="type")]
UserPart = Annotated[TextPart | ImagePart | FilePart, Field(discriminator="type")]
AssistantPart = Annotated[
    TextPart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart | ToolApprovalRequestPart,
    Field(discriminator="type"),
]
"""A ``tool-result`` here is the result of a tool the provider ran itself (web search, code execution), which
the provider answers within the same turn."""
ToolPart = Annotated[ToolResultPart | ToolApprovalResponsePart, Field(discriminator="type")]


def part_models(union: object) -> tuple[type[PartModel], ...]:
    """The part models of a role's union (``UserPart``...), in their order."""
    (members, *_) = get_args(union)
    return get_args(members) or (members,)


def part_type(model: type[PartModel]) -> str:
    """The ``type`` a part model stands for."""
    (literal,) = get_args(model.model_fields["type"].annotation)
    return str(literal)
