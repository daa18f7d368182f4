"""Tool definitions as callers give them (the AI SDK shape ``{name, description, inputSchema}``), checked.

Adapters convert these to their provider's shape. A definition a provider would reject (no name, a name
outside ``[a-zA-Z0-9_-]{1,64}``, a schema that is not an object schema) is refused here with the field at
fault, rather than repaired: a tool's name is what the model calls, so renaming it would break the caller.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.providers.errors import InvalidToolDefinition
from app.providers.sendable_text import holds_surrogate

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
EMPTY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    name: str
    description: str | None
    input_schema: dict[str, Any]


def parse_tools(raw: Sequence[Mapping[str, Any]] | None) -> tuple[ToolDefinition, ...]:
    if raw is None:
        return ()
    tools: list[ToolDefinition] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise InvalidToolDefinition("a tool definition must be an object", index=index)
        extra = sorted(set(item) - {"name", "description", "inputSchema"})
        if extra:
            raise InvalidToolDefinition(f"unknown keys {', '.join(extra)}", index=index)
        name = item.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise InvalidToolDefinition("name must match ^[a-zA-Z0-9_-]{1,64}$", index=index)
        if name in seen:
            raise InvalidToolDefinition(f"tool {name!r} is defined twice", index=index)
        seen.add(name)
        description = item.get("description")
        if description is not None and not isinstance(description, str):
            raise InvalidToolDefinition("description must be a string", index=index)
        if holds_surrogate(dict(item)):
            raise InvalidToolDefinition("contains an unpaired UTF-16 surrogate, which no provider accepts", index=index)
        schema = item.get("inputSchema", EMPTY_OBJECT_SCHEMA)
        if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
            raise InvalidToolDefinition("inputSchema must be a JSON Schema of type object", index=index)
        tools.append(ToolDefinition(name, description or None, {"type": "object", **schema}))
    return tuple(tools)
