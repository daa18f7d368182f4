"""The ``ai-sdk`` target: arguments for the AI SDK's ``generateText``/``streamText``, as JSON.

Shape: ``{model, system?, messages: ModelMessage[], tools?: {name: {description?, inputSchema}},
maxOutputTokens?}``; a caller wraps each ``inputSchema`` with ``jsonSchema()``. The SDK hands these messages
to any provider, so the payload keeps the strictest rules of all: system text only in ``system`` (later notes
as wrapped user text), every call answered by the next ``tool`` message, ids in ``[a-zA-Z0-9_-]`` and at most
40 characters, no empty text, and tool outputs in forms AI SDK v5 and v6 both accept (text, json, error-text,
error-json, and content with ``text``/``media`` items). Reasoning parts keep their providerOptions untouched;
the SDK's provider decides whether it can replay them.
"""

from typing import Any

from app.projections.types import Repair
from app.providers.conversation import Settled, unsettled, wrap_system_note
from app.providers.tool_definitions import ToolDefinition
from app.providers.tool_ids import ToolIdMap
from app.providers.tool_output import read_output

MAX_TOOL_CALL_ID = 40
"""OpenAI's limit, the tightest of the providers the SDK may forward these ids to."""


def to_ai_sdk(
    settled: Settled, *, model: str, tools: tuple[ToolDefinition, ...], max_output_tokens: int | None
) -> tuple[dict[str, Any], list[Repair]]:
    repairs: list[Repair] = []
    ids = ToolIdMap(MAX_TOOL_CALL_ID, "ai-sdk")
    messages: list[dict[str, Any]] = []
    for message in settled.messages:
        match message["role"]:
            case "system":
                repairs.append(Repair("system-note-as-user", "ai-sdk: a later system note sent as wrapped user text"))
                messages.append(
                    {"role": "user", "content": [{"type": "text", "text": wrap_system_note(message["content"])}]}
                )
            case "user":
                messages.append({"role": "user", "content": list(message["content"])})
            case "assistant":
                content = [
                    {**part, "toolCallId": ids(part["toolCallId"])} if part["type"] == "tool-call" else part
                    for part in message["content"]
                ]
                messages.append({"role": "assistant", "content": content})
            case "tool":
                results = [_result(part, ids, repairs) for part in message["content"]]
                messages.append({"role": "tool", "content": results})
            case other:
                unsettled("ai-sdk", f"a {other!r} message")
    payload: dict[str, Any] = {"model": model}
    if settled.system:
        payload["system"] = settled.system
    payload["messages"] = messages
    if tools:
        payload["tools"] = {tool.name: _tool(tool) for tool in tools}
    if max_output_tokens is not None:
        payload["maxOutputTokens"] = max_output_tokens
    return payload, repairs + ids.repairs()


def _result(part: dict[str, Any], ids: ToolIdMap, repairs: list[Repair]) -> dict[str, Any]:
    result = {**part, "toolCallId": ids(part["toolCallId"]), "output": _output(part["output"], repairs)}
    return result


def _output(output: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    match output["type"]:
        case "text" | "error-text" | "json" | "error-json":
            return output
        case "execution-denied":
            repairs.append(
                Repair("denied-as-error-text", "ai-sdk: execution-denied sent as error-text (v5 has no denied output)")
            )
            return {"type": "error-text", "value": read_output(output).text}
        case "content":
            read = read_output(output)
            items: list[dict[str, Any]] = []
            for item in read.items:
                if isinstance(item, str):
                    items.append({"type": "text", "text": item})
                elif item.base64 is not None:
                    items.append({"type": "media", "data": item.base64, "mediaType": item.media_type})
                else:
                    repairs.append(Repair("media-as-text", f"ai-sdk: URL media {item.describe()} named in text"))
                    items.append({"type": "text", "text": f"[attached: {item.describe()}]"})
            if items != output.get("value"):
                repairs.append(Repair("tool-output-content", "ai-sdk: content items rewritten as text and media"))
            return {"type": "content", "value": items}
        case other:
            unsettled("ai-sdk", f"a {other!r} tool output")


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    definition: dict[str, Any] = {"inputSchema": tool.input_schema}
    if tool.description:
        definition["description"] = tool.description
    return definition
