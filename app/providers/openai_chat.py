"""The ``openai`` target: an OpenAI Chat Completions request body.

Rules applied: system text as ``system`` messages; every assistant
``tool_calls`` entry answered by one ``tool`` message right after it; ids at most 40 characters;
``arguments`` a JSON string; images only in ``user`` messages (tool and assistant media move to a user message
after the tool messages); no reasoning (Chat Completions cannot take it back); no tool the provider ran
itself (Chat Completions has no form for one: the call and its result are left out, and said so); no unknown
keys. A reasoning effort is ``reasoning_effort``, a structured answer ``response_format`` (``json_schema``).
Never decides which messages go in.
"""

import json
import re
from typing import Any

from app.projections.types import Repair
from app.providers.conversation import Settled, unsettled
from app.providers.media import Media, part_media, unreadable
from app.providers.request_settings import NO_SETTINGS, OutputFormat, RequestSettings
from app.providers.tool_definitions import ToolDefinition
from app.providers.tool_ids import ToolIdMap
from app.providers.tool_output import read_output

MAX_TOOL_CALL_ID = 40
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def to_openai_chat(
    settled: Settled,
    *,
    model: str,
    tools: tuple[ToolDefinition, ...],
    max_output_tokens: int | None,
    settings: RequestSettings = NO_SETTINGS,
) -> tuple[dict[str, Any], list[Repair]]:
    repairs: list[Repair] = []
    ids = ToolIdMap(MAX_TOOL_CALL_ID, "openai")
    messages: list[dict[str, Any]] = []
    if settled.system and settled.opens_conversation:
        # The system message opens the conversation; a continuation (a later turn's tail) follows the one sent.
        messages.append({"role": "system", "content": settled.system})
    pending_media: list[tuple[str, Media]] = []
    for index, message in enumerate(settled.messages):
        match message["role"]:
            case "system":
                messages.append({"role": "system", "content": message["content"]})
            case "user":
                content = [_user_part(part, repairs) for part in message["content"]]
                messages.append({"role": "user", "content": content})
            case "assistant":
                assistant, media = _assistant(message["content"], ids, repairs)
                if assistant is not None:
                    messages.append(assistant)
                pending_media += [("assistant", item) for item in media]
            case "tool":
                for part in message["content"]:
                    output = read_output(part["output"])
                    text = output.text if not output.is_error else "Error: " + output.text
                    messages.append({"role": "tool", "tool_call_id": ids(part["toolCallId"]), "content": text})
                    pending_media += [(f"tool result {ids(part['toolCallId'])}", item) for item in output.media]
            case other:
                unsettled("openai", f"a {other!r} message")
        following = settled.messages[index + 1]["role"] if index + 1 < len(settled.messages) else None
        if pending_media and following != "tool":
            messages.append(_media_message(pending_media, repairs))
            pending_media = []
    payload: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        payload["tools"] = [_tool(tool) for tool in tools]
    if max_output_tokens is not None:
        payload["max_completion_tokens"] = max_output_tokens
    if settings.effort is not None:
        if reasons(model):
            payload["reasoning_effort"] = settings.effort.as_level()
        else:
            repairs.append(Repair("effort-unsupported", f"openai: {model} does not reason; the variant is not sent"))
    if settings.output is not None:
        payload["response_format"] = {"type": "json_schema", "json_schema": json_schema_format(settings.output)}
    return payload, repairs + ids.repairs()


_NOT_REASONING = re.compile(r"^(?:ft:)?(?:gpt-4|gpt-3\.5|chatgpt-4o)")
"""OpenAI's models from before reasoning (``gpt-4o``, ``gpt-4.1``, ``gpt-4-turbo``...), fine-tuned ones too:
they refuse a reasoning effort ("Unsupported parameter: 'reasoning_effort' is not supported with this
model")."""


def reasons(model: str) -> bool:
    """Whether ``model`` may take a reasoning effort: every model but OpenAI's known older ones (a locally
    served model behind the same API is given what was asked)."""
    return _NOT_REASONING.match(model.strip().lower().removeprefix("openai/")) is None


def json_schema_format(output: OutputFormat) -> dict[str, Any]:
    """OpenAI's named JSON Schema format (``json_schema`` in Chat Completions, ``text.format`` in Responses)."""
    described: dict[str, Any] = {"name": output.name, "schema": output.schema}
    if output.description is not None:
        described["description"] = output.description
    if output.strict is not None:
        described["strict"] = output.strict
    return described


def _assistant(parts: list[Any], ids: ToolIdMap, repairs: list[Repair]) -> tuple[dict[str, Any] | None, list[Media]]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    media: list[Media] = []
    for part in parts:
        if part.get("providerExecuted") or part["type"] == "tool-result":
            repairs.append(
                Repair(
                    "provider-tool-dropped",
                    f"openai: Chat Completions has no form for a {part['toolName']} the provider ran",
                )
            )
            continue
        match part["type"]:
            case "text":
                texts.append(part["text"])
            case "reasoning":
                repairs.append(Repair("reasoning-dropped", "openai: Chat Completions takes no reasoning back"))
            case "file":
                media.append(part_media(part))
                repairs.append(Repair("media-moved", "openai: assistant media moved to a user message"))
            case "tool-call":
                arguments = json.dumps(part["input"], ensure_ascii=False)
                function = {"name": part["toolName"], "arguments": arguments}
                calls.append({"id": ids(part["toolCallId"]), "type": "function", "function": function})
            case other:
                unsettled("openai", f"an assistant {other!r} part")
    if not texts and not calls:
        repairs.append(Repair("empty-message", "openai: dropped an assistant turn with nothing it can carry"))
        return None, media
    message: dict[str, Any] = {"role": "assistant"}
    if texts:
        message["content"] = "\n\n".join(texts)
    if calls:
        message["tool_calls"] = calls
    return message, media


def _user_part(part: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    match part["type"]:
        case "text":
            return {"type": "text", "text": part["text"]}
        case "image" | "file":
            return _media_part(part_media(part), repairs)
        case other:
            unsettled("openai", f"a user {other!r} part")


def _media_part(media: Media, repairs: list[Repair]) -> dict[str, Any]:
    if media.media_type in IMAGE_TYPES:
        return {"type": "image_url", "image_url": {"url": media.data_url}}
    if media.media_type == "application/pdf" and media.base64 is not None:
        return {"type": "file", "file": {"file_data": media.data_url, "filename": media.filename or "document.pdf"}}
    repairs.append(Repair("media-as-text", f"openai: cannot send {media.describe()}; said so in text"))
    return {"type": "text", "text": unreadable(media)}


def _media_message(media: list[tuple[str, Media]], repairs: list[Repair]) -> dict[str, Any]:
    sources = sorted({source for source, _ in media})
    content: list[dict[str, Any]] = [{"type": "text", "text": f"Attached from the {', '.join(sources)}:"}]
    content += [_media_part(item, repairs) for _, item in media]
    repairs.append(Repair("media-moved", "openai: media from tool results or assistant sent in a user message"))
    return {"role": "user", "content": content}


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "parameters": tool.input_schema}
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}
