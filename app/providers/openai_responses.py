"""The ``openai-responses`` target: an OpenAI Responses API request body.

Rules applied: the leading system text as ``instructions``, later notes
as ``system`` messages; every ``function_call`` answered by one ``function_call_output`` with the same
``call_id`` (at most 64 characters); ``arguments`` a JSON string; Responses part types only
(``input_text``/``input_image``/``input_file``); assistant text as plain strings; reasoning replayed only as
an OpenAI item (id plus encrypted content) followed by the item it produced; a built-in tool the provider
ran (web search, file search, code interpreter...) replayed as an ``item_reference`` to the item OpenAI
stored, when its item id is known, and otherwise left out with its result, said so; no unknown keys.
A reasoning effort is ``reasoning.effort``, a structured answer ``text.format`` (``json_schema``).
"""

import json
from typing import Any

from app.projections.types import Repair
from app.providers.conversation import Settled, unsettled
from app.providers.media import Media, part_media, unreadable
from app.providers.openai_chat import json_schema_format, reasons
from app.providers.request_settings import NO_SETTINGS, RequestSettings
from app.providers.tool_definitions import ToolDefinition
from app.providers.tool_ids import ToolIdMap
from app.providers.tool_output import read_output

MAX_CALL_ID = 64
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def to_openai_responses(
    settled: Settled,
    *,
    model: str,
    tools: tuple[ToolDefinition, ...],
    max_output_tokens: int | None,
    settings: RequestSettings = NO_SETTINGS,
) -> tuple[dict[str, Any], list[Repair]]:
    repairs: list[Repair] = []
    ids = ToolIdMap(MAX_CALL_ID, "openai-responses")
    items: list[dict[str, Any]] = []
    pending_media: list[Media] = []
    for index, message in enumerate(settled.messages):
        match message["role"]:
            case "system":
                items.append({"type": "message", "role": "system", "content": message["content"]})
            case "user":
                content = [_input_part(part, repairs) for part in message["content"]]
                items.append({"type": "message", "role": "user", "content": content})
            case "assistant":
                produced, media = _assistant_items(message["content"], ids, repairs)
                items += produced
                pending_media += media
            case "tool":
                for part in message["content"]:
                    items.append(_output_item(part, ids, repairs))
            case other:
                unsettled("openai-responses", f"a {other!r} message")
        following = settled.messages[index + 1]["role"] if index + 1 < len(settled.messages) else None
        if pending_media and following != "tool":
            repairs.append(Repair("media-moved", "openai-responses: assistant media moved to a user message"))
            items.append(
                {"type": "message", "role": "user", "content": [_media_part(m, repairs) for m in pending_media]}
            )
            pending_media = []
    payload: dict[str, Any] = {"model": model, "input": items}
    if settled.system:
        payload["instructions"] = settled.system
    if tools:
        payload["tools"] = [_tool(tool) for tool in tools]
    if max_output_tokens is not None:
        payload["max_output_tokens"] = max_output_tokens
    if settings.effort is not None:
        if reasons(model):
            payload["reasoning"] = {"effort": settings.effort.as_level()}
        else:
            repairs.append(
                Repair("effort-unsupported", f"openai-responses: {model} does not reason; the variant is not sent")
            )
    if settings.output is not None:
        payload["text"] = {"format": {"type": "json_schema", **json_schema_format(settings.output)}}
    return payload, repairs + ids.repairs()


def _assistant_items(
    parts: list[Any], ids: ToolIdMap, repairs: list[Repair]
) -> tuple[list[dict[str, Any]], list[Media]]:
    """Reasoning and text in their order, then the function calls, so that a call's output can follow it.

    A reasoning item goes in only directly before an item it produced (text or a call), as the API requires.
    """
    items: list[dict[str, Any]] = []
    media: list[Media] = []
    texts: list[str] = []
    reasoning: dict[str, Any] | None = None
    calls = [part for part in parts if part["type"] == "tool-call" and not part.get("providerExecuted")]
    if any(part["type"] == "text" for part in parts[parts.index(calls[0]) :]) if calls else False:
        repairs.append(Repair("function-calls-last", "openai-responses: text sent before the turn's function calls"))

    def flush_text() -> None:
        nonlocal reasoning
        if texts:
            if reasoning is not None:
                items.append(reasoning)
                reasoning = None
            items.append({"type": "message", "role": "assistant", "content": "\n\n".join(texts)})
            texts.clear()

    for part in parts:
        if part.get("providerExecuted") or part["type"] == "tool-result":
            reference = _item_reference(part, parts, repairs)
            if reference is not None:
                flush_text()
                if reasoning is not None:
                    items.append(reasoning)
                    reasoning = None
                items.append(reference)
            continue
        match part["type"]:
            case "reasoning":
                flush_text()
                if reasoning is not None:
                    repairs.append(
                        Repair("reasoning-dropped", "openai-responses: a reasoning item without its following item")
                    )
                reasoning = _reasoning_item(part)
                if reasoning is None:
                    repairs.append(
                        Repair(
                            "reasoning-dropped",
                            "openai-responses: reasoning without an OpenAI item id and encrypted content",
                        )
                    )
            case "text":
                texts.append(part["text"])
            case "file":
                media.append(part_media(part))
            case "tool-call":
                pass  # sent after the turn's text, below
            case other:
                unsettled("openai-responses", f"an assistant {other!r} part")
    flush_text()
    if reasoning is not None and calls:
        items.append(reasoning)
    elif reasoning is not None:
        repairs.append(Repair("reasoning-dropped", "openai-responses: a reasoning item without its following item"))
    for part in calls:
        items.append(
            {
                "type": "function_call",
                "call_id": ids(part["toolCallId"]),
                "name": part["toolName"],
                "arguments": json.dumps(part["input"], ensure_ascii=False),
            }
        )
    return items, media


def _item_reference(part: dict[str, Any], parts: list[Any], repairs: list[Repair]) -> dict[str, Any] | None:
    """The reference to the item OpenAI stored for a call of a built-in tool, made once, for the call (its
    result is the same item); ``None`` for the result, and for a call whose item id is not known."""
    if part["type"] != "tool-call":
        return None
    item_id = _item_id(part) or next(
        (_item_id(p) for p in parts if p["type"] == "tool-result" and p["toolCallId"] == part["toolCallId"]), None
    )
    if item_id is None:
        repairs.append(
            Repair(
                "provider-tool-dropped",
                f"openai-responses: {part['toolName']} has no OpenAI item id; left out with its result",
            )
        )
        return None
    return {"type": "item_reference", "id": item_id}


def _item_id(part: dict[str, Any]) -> str | None:
    item_id = ((part.get("providerOptions") or {}).get("openai") or {}).get("itemId")
    return item_id if isinstance(item_id, str) and item_id else None


def _reasoning_item(part: dict[str, Any]) -> dict[str, Any] | None:
    options = (part.get("providerOptions") or {}).get("openai") or {}
    item_id, encrypted = options.get("itemId"), options.get("reasoningEncryptedContent")
    if not (isinstance(item_id, str) and item_id and isinstance(encrypted, str) and encrypted):
        return None
    summary = [{"type": "summary_text", "text": part["text"]}] if part["text"] else []
    return {"type": "reasoning", "id": item_id, "summary": summary, "encrypted_content": encrypted}


def _output_item(part: dict[str, Any], ids: ToolIdMap, repairs: list[Repair]) -> dict[str, Any]:
    output = read_output(part["output"])
    call_id = ids(part["toolCallId"])
    if output.is_error or not output.media:
        text = "Error: " + output.text if output.is_error else output.text
        return {"type": "function_call_output", "call_id": call_id, "output": text}
    content = [
        {"type": "input_text", "text": item} if isinstance(item, str) else _media_part(item, repairs)
        for item in output.items
        if not isinstance(item, str) or item.strip()
    ]
    return {"type": "function_call_output", "call_id": call_id, "output": content}


def _input_part(part: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    match part["type"]:
        case "text":
            return {"type": "input_text", "text": part["text"]}
        case "image" | "file":
            return _media_part(part_media(part), repairs)
        case other:
            unsettled("openai-responses", f"a user {other!r} part")


def _media_part(media: Media, repairs: list[Repair]) -> dict[str, Any]:
    if media.media_type in IMAGE_TYPES:
        return {"type": "input_image", "image_url": media.data_url, "detail": "auto"}
    if media.media_type == "application/pdf":
        if media.url is not None:
            return {"type": "input_file", "file_url": media.url}
        return {"type": "input_file", "file_data": media.data_url, "filename": media.filename or "document.pdf"}
    repairs.append(Repair("media-as-text", f"openai-responses: cannot send {media.describe()}; said so in text"))
    return {"type": "input_text", "text": unreadable(media)}


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    definition: dict[str, Any] = {
        "type": "function",
        "name": tool.name,
        "parameters": tool.input_schema,
        "strict": False,
    }
    if tool.description:
        definition["description"] = tool.description
    return definition
