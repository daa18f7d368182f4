"""Tool definitions as callers give them (the AI SDK shape ``{name, description, inputSchema}``), checked.

Adapters convert these to their provider's shape. A definition a provider would reject (no name, a name
outside ``[a-zA-Z0-9_-]{1,64}``, a schema that is not an object schema) is refused here with the field at
fault, rather than repaired: a tool's name is what the model calls, so renaming it would break the caller.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, ValidationError
from pydantic_core import ErrorDetails

from app.engine.parts import WIRE_CONFIG
from app.providers.errors import InvalidToolDefinition
from app.providers.sendable_text import holds_surrogate

NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
EMPTY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    name: str
    description: str | None
    input_schema: dict[str, Any]


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type", "object") != "object":
        raise ValueError("not a JSON Schema of type object")
    return schema


class ToolDefinitionIn(BaseModel):
    """The wire shape of a tool definition."""

    model_config = WIRE_CONFIG

    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    description: str | None = None
    input_schema: Annotated[dict[str, Any], AfterValidator(_object_schema)] = EMPTY_OBJECT_SCHEMA


_FIELD_ERRORS = {
    "name": f"name must match {NAME_PATTERN}",
    "description": "description must be a string",
    "inputSchema": "inputSchema must be a JSON Schema of type object",
}
"""What each field's error says, whatever pydantic found wrong with it."""


def parse_tools(raw: Sequence[Mapping[str, Any]] | None) -> tuple[ToolDefinition, ...]:
    if raw is None:
        return ()
    tools: list[ToolDefinition] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        try:
            tool = ToolDefinitionIn.model_validate(item, by_alias=True, by_name=False)
        except ValidationError as invalid:
            raise InvalidToolDefinition(_detail(invalid.errors()), index=index) from None
        if tool.name in seen:
            raise InvalidToolDefinition(f"tool {tool.name!r} is defined twice", index=index)
        seen.add(tool.name)
        if holds_surrogate(dict(item)):
            raise InvalidToolDefinition("contains an unpaired UTF-16 surrogate, which no provider accepts", index=index)
        # The caller's own schema goes on as given; the model only checked it.
        schema = item.get("inputSchema", EMPTY_OBJECT_SCHEMA)
        tools.append(ToolDefinition(tool.name, tool.description or None, {"type": "object", **schema}))
    return tuple(tools)


def switch_tools(
    tools: tuple[ToolDefinition, ...], switches: Mapping[str, bool]
) -> tuple[tuple[ToolDefinition, ...], list[str]]:
    """The tools opencode's tools map leaves on, and the names it turns off. A key is a tool name or a pattern
    with ``*`` (``"mcp_*": false``); a tool's own name decides over patterns, and of the patterns that match
    it the last one given decides. A tool the map does not name stays on."""
    kept: list[ToolDefinition] = []
    off: list[str] = []
    for tool in tools:
        if _switched_on(tool.name, switches):
            kept.append(tool)
        else:
            off.append(tool.name)
    return tuple(kept), off


def _switched_on(name: str, switches: Mapping[str, bool]) -> bool:
    if name in switches:
        return switches[name]
    matching = [on for pattern, on in switches.items() if "*" in pattern and fnmatchcase(name, pattern)]
    return matching[-1] if matching else True


def _detail(errors: list[ErrorDetails]) -> str:
    """One message for a definition's errors: unknown keys first, then the fields in their order."""
    if any(not error["loc"] for error in errors):
        return "a tool definition must be an object"
    extra = sorted(str(error["loc"][0]) for error in errors if error["type"] == "extra_forbidden")
    if extra:
        return f"unknown keys {', '.join(extra)}"
    return _FIELD_ERRORS[str(errors[0]["loc"][0])]
