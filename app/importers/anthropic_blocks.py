"""Anthropic Messages content blocks as AI SDK ModelMessage parts: shared by the Claude Code transcript
(whose lines hold API messages) and the ``anthropic-messages`` request import.

A block with no part shape is never dropped silently: each converter appends to ``notes`` what it changed,
and the caller reports those notes as repairs of the message. Signatures and redacted thinking stay in
``providerOptions.anthropic`` exactly as the API returned them, so a replay to the same model is accepted.
"""

from collections.abc import Mapping
from typing import Any

from app.importers.untyped import as_object

ANTHROPIC = "anthropic"
FINISH_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content-filter",
    "pause_turn": "other",
}
"""The API's ``stop_reason`` as the AI SDK's finish reason."""


def assistant_parts(blocks: Any, tool_names: dict[str, str], notes: list[str]) -> list[dict[str, Any]]:
    """An assistant message's blocks as parts; ``tool_names`` learns each call's tool for its result."""
    if isinstance(blocks, str):
        return [{"type": "text", "text": blocks}]
    parts: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else []:
        part = _assistant_part(block, tool_names, notes)
        if part is not None:
            parts.append(part)
    return parts


def _assistant_part(block: Any, tool_names: dict[str, str], notes: list[str]) -> dict[str, Any] | None:
    kind = block.get("type") if isinstance(block, dict) else None
    match kind:
        case "text":
            if block.get("citations"):
                notes.append("citations of a text block left out (no part holds them)")
            return {"type": "text", "text": str(block.get("text", ""))}
        case "thinking":
            part: dict[str, Any] = {"type": "reasoning", "text": str(block.get("thinking", ""))}
            signature = block.get("signature")
            if isinstance(signature, str) and signature:
                part["providerOptions"] = {ANTHROPIC: {"signature": signature}}
            return part
        case "redacted_thinking":
            return {
                "type": "reasoning",
                "text": "",
                "providerOptions": {ANTHROPIC: {"redactedData": block.get("data")}},
            }
        case "tool_use" | "server_tool_use" | "mcp_tool_use":
            call_id, name = str(block.get("id", "")), str(block.get("name", ""))
            tool_names[call_id] = name
            call: dict[str, Any] = {"type": "tool-call", "toolCallId": call_id, "toolName": name}
            call["input"] = block.get("input", {})
            if kind != "tool_use":
                call["providerExecuted"] = True
            return call
        case str() if kind.endswith("_tool_result"):
            call_id = str(block.get("tool_use_id", ""))
            result: dict[str, Any] = {
                "type": "tool-result",
                "toolCallId": call_id,
                "toolName": tool_names.get(call_id, kind.removesuffix("_tool_result")),
                "output": {"type": "error-json" if block.get("is_error") else "json", "value": block.get("content")},
                "providerExecuted": True,
            }
            return result
        case _:
            notes.append(f"assistant block of type {kind!r} left out (no part holds it)")
            return None


def user_parts(blocks: Any, notes: list[str]) -> list[dict[str, Any]]:
    """A user message's blocks other than tool results, as user parts."""
    if isinstance(blocks, str):
        return [{"type": "text", "text": blocks}]
    parts: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        match kind:
            case "tool_result":
                continue
            case "text":
                parts.append({"type": "text", "text": str(block.get("text", ""))})
            case "image" | "document":
                part = _media_part(block, notes)
                if part is not None:
                    parts.append(part)
            case _:
                notes.append(f"user block of type {kind!r} left out (no part holds it)")
    return parts


def tool_results(blocks: Any, tool_names: Mapping[str, str], notes: list[str]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of a user message, as tool-result parts (``is_error`` as error output)."""
    if not isinstance(blocks, list):
        return []
    results: list[dict[str, Any]] = []
    for block in blocks:
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            continue
        call_id = str(block.get("tool_use_id", ""))
        results.append(
            {
                "type": "tool-result",
                "toolCallId": call_id,
                "toolName": tool_names.get(call_id) or "unknown",
                "output": result_output(block.get("content"), bool(block.get("is_error")), notes),
            }
        )
    return results


def result_output(content: Any, is_error: bool, notes: list[str]) -> dict[str, Any]:
    """A tool result's content as a ToolResultOutput: text when it is one text, else the content items."""
    if content is None or isinstance(content, str):
        return {"type": "error-text" if is_error else "text", "value": content or ""}
    if not isinstance(content, list):
        return {"type": "error-json" if is_error else "json", "value": content}
    items = [item for block in content if (item := _result_item(block, notes)) is not None]
    if is_error:
        texts = [item["text"] for item in items if item["type"] == "text"]
        if len(texts) < len(items):
            notes.append("media of an error result left out (an error result holds text only)")
        return {"type": "error-text", "value": "\n".join(texts)}
    if len(items) == 1 and items[0]["type"] == "text":
        return {"type": "text", "value": items[0]["text"]}
    return {"type": "content", "value": items}


def _result_item(block: Any, notes: list[str]) -> dict[str, Any] | None:
    kind = block.get("type") if isinstance(block, dict) else None
    match kind:
        case "text":
            return {"type": "text", "text": str(block.get("text", ""))}
        case "image" | "document":
            source = as_object(block.get("source"))
            media_type = source.get("media_type") or ("application/pdf" if kind == "document" else "image/png")
            if source.get("type") == "base64":
                item_type = "image-data" if kind == "image" else "file-data"
                return {"type": item_type, "data": str(source.get("data", "")), "mediaType": media_type}
            if source.get("type") == "url":
                return {"type": "image-url" if kind == "image" else "file-url", "url": str(source.get("url", ""))}
            notes.append(f"{kind} of source {source.get('type')!r} in a tool result left out")
            return None
        case "tool_reference":
            notes.append(f"tool_reference to {block.get('tool_name')!r} kept as text (no content item holds it)")
            return {"type": "text", "text": f"[tool reference: {block.get('tool_name')}]"}
        case _:
            notes.append(f"tool result item of type {kind!r} left out (no content item holds it)")
            return None


def _media_part(block: dict[str, Any], notes: list[str]) -> dict[str, Any] | None:
    source = as_object(block.get("source"))
    image = block["type"] == "image"
    media_type = source.get("media_type") or ("image/png" if image else "application/pdf")
    match source.get("type"):
        case "base64":
            data = str(source.get("data", ""))
        case "url":
            data = str(source.get("url", ""))
            if image:
                return {"type": "image", "image": data}
        case "text":
            notes.append("plain-text document kept as text")
            return {"type": "text", "text": str(source.get("data", ""))}
        case "content":
            notes.append("document of content blocks kept as its text")
            return {"type": "text", "text": block_text(source.get("content"))}
        case other:
            notes.append(f"{block['type']} of source {other!r} left out (no part holds it)")
            return None
    if image:
        return {"type": "image", "image": data, "mediaType": media_type}
    part = {"type": "file", "data": data, "mediaType": media_type}
    if isinstance(block.get("title"), str):
        part["filename"] = block["title"]
    return part


def usage(raw: Any) -> dict[str, int] | None:
    """The API's usage as the service keeps it: cache reads and writes apart from input, and the share of the
    writes made to the one-hour cache (``cache_creation``) when there is one."""
    if not isinstance(raw, dict):
        return None
    keys = {
        "inputTokens": "input_tokens",
        "outputTokens": "output_tokens",
        "cacheReadTokens": "cache_read_input_tokens",
        "cacheWriteTokens": "cache_creation_input_tokens",
    }
    counted = {ours: raw[theirs] for ours, theirs in keys.items() if isinstance(raw.get(theirs), int)}
    one_hour = as_object(raw.get("cache_creation")).get("ephemeral_1h_input_tokens")
    if isinstance(one_hour, int) and one_hour > 0:
        counted["cacheWrite1hTokens"] = one_hour  # the writes that live an hour, priced at their own rate
    return counted or None


def block_text(content: Any) -> str:
    """The text of a string or of a list of blocks (its text blocks, joined)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
