"""The ``anthropic`` target: an Anthropic Messages request body.

Rules applied: system text top-level (later notes as wrapped user text);
turns alternate, start and end on ``user``; each ``tool_use`` is answered by ``tool_result`` blocks first in
the very next user turn; ids match ``^[a-zA-Z0-9_-]+$`` (at most 64); ``input`` an object; thinking replayed
only when Anthropic signed it, first in its turn, never last; no empty text; ``tools`` defined whenever tool
blocks appear; ``max_tokens`` always set. Never edits a signed block. A tool Anthropic ran itself goes back in
its own form, in its place in the turn (``server_tool_use`` and its ``web_search_tool_result``,
``web_fetch_tool_result`` or code execution result); one with no such form is left out with its result, said
so. A reasoning effort is ``thinking`` (a budget, or adaptive thinking with ``output_config.effort`` from
Claude 4.6 on), a structured answer ``output_config.format``. Cache breakpoints are placed afterwards, by
``app.providers.caching`` (``system`` then becomes one text block carrying the mark).
"""

import re
from typing import Any

from app.projections.types import Repair
from app.providers.conversation import NO_OUTPUT, START, Settled, unsettled, wrap_system_note
from app.providers.media import Media, part_media, unreadable
from app.providers.request_settings import NO_SETTINGS, Effort, RequestSettings
from app.providers.tool_definitions import EMPTY_OBJECT_SCHEMA, ToolDefinition
from app.providers.tool_ids import ToolIdMap, all_kept
from app.providers.tool_output import read_output

DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires ``max_tokens``; 4096 is within every Claude model's output limit."""
MAX_TOOL_USE_ID = 64
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Anthropic refuses a base64 image over 5 MB."""
PLACEHOLDER_TOOL = {
    "name": "no_tools_available",
    "description": "No tools are available in this request. Do not call this tool.",
    "input_schema": EMPTY_OBJECT_SCHEMA,
}
"""Anthropic rejects tool blocks in a request without ``tools``; this keeps the history's calls valid."""
MIN_THINKING_BUDGET = 1024
THINKING_FROM = (3, 7)
"""Claude 3.7 Sonnet was the first Claude to think: an older one takes no ``thinking``."""
ADAPTIVE_FROM = (4, 6)
"""Claude 4.6 and later think adaptively (``thinking.type`` ``adaptive`` with an effort) and take no prefill."""
EFFORT_LEVELS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}
"""``output_config.effort`` for each effort level (Anthropic has no ``minimal``)."""
_CLAUDE = re.compile(r"claude-(?:(?:opus|sonnet|haiku)-)?(\d+)(?:[-.](\d)(?!\d))?")
SERVER_TOOLS = frozenset({"web_search", "web_fetch", "code_execution"})
"""The tools Anthropic runs itself whose calls and results replay in their own blocks."""


def to_anthropic(
    settled: Settled,
    *,
    model: str,
    tools: tuple[ToolDefinition, ...],
    max_output_tokens: int | None,
    settings: RequestSettings = NO_SETTINGS,
) -> tuple[dict[str, Any], list[Repair]]:
    repairs: list[Repair] = []
    tool_ids: list[str] = []
    turns: list[dict[str, Any]] = []
    uses_tools = False
    pending_media: list[Media] = []
    for index, message in enumerate(settled.messages):
        # The roles of a long history, most frequent first (a match tries its cases in order).
        match message["role"]:
            case "tool":
                _add(turns, "user", _tool_results(message["content"], tool_ids, repairs), repairs)
            case "assistant":
                blocks = _assistant_blocks(message["content"], tool_ids, pending_media, repairs)
                uses_tools = uses_tools or any(block["type"] == "tool_use" for block in blocks)
                if blocks:
                    _add(turns, "assistant", blocks, repairs)
                else:
                    repairs.append(
                        Repair("empty-message", "anthropic: dropped an assistant turn with nothing it can carry")
                    )
            case "user":
                _add(turns, "user", [_user_block(part, repairs) for part in message["content"]], repairs)
            case "system":
                repairs.append(
                    Repair("system-note-as-user", "anthropic: a later system note sent as wrapped user text")
                )
                _add(turns, "user", [{"type": "text", "text": wrap_system_note(message["content"])}], repairs)
            case other:
                unsettled("anthropic", f"a {other!r} message")
        if pending_media and _next_role(settled.messages, index) != "tool":
            # After the tool results, never before them: tool_result blocks must open the user turn.
            repairs.append(Repair("media-moved", "anthropic: assistant media moved to the next user turn"))
            _add(turns, "user", [_media_block(item, repairs) for item in pending_media], repairs)
            pending_media = []
    if turns and turns[0]["role"] != "user" and settled.opens_conversation:
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": START}]})
        # Listed first, where the turn goes: what follows is listed message by message.
        repairs.insert(
            0, Repair("starts-on-assistant", f"anthropic: added a user turn {START!r} before the first assistant turn")
        )
    payload: dict[str, Any] = {
        "model": model,
        "max_tokens": max_output_tokens if max_output_tokens is not None else DEFAULT_MAX_TOKENS,
        "messages": turns,
    }
    if settled.system:
        payload["system"] = settled.system
    if tools:
        payload["tools"] = [_tool(tool) for tool in tools]
    elif uses_tools:
        payload["tools"] = [PLACEHOLDER_TOOL]
        repairs.append(
            Repair(
                "tools-required", "anthropic: history has tool calls but no tools were given; added a placeholder tool"
            )
        )
    output_config: dict[str, Any] = {}
    if settings.effort is not None:
        _think(payload, output_config, settings.effort, model, max_output_tokens, repairs)
    if settings.output is not None:
        output_config["format"] = {"type": "json_schema", "schema": settings.output.schema}
    if output_config:
        payload["output_config"] = output_config
    return payload, repairs + _fit_tool_ids(turns, tool_ids)


def claude_version(model: str) -> tuple[int, int] | None:
    """A Claude model's version (``claude-sonnet-4-5`` is (4, 5), ``claude-3-7-sonnet`` (3, 7)), or ``None``."""
    found = _CLAUDE.search(model.lower())
    return (int(found[1]), int(found[2] or 0)) if found else None


def takes_prefill(model: str) -> bool:
    """Whether the model continues a final assistant turn: every Claude before 4.6 (and a model that is not
    named like a Claude one, whose server decides)."""
    version = claude_version(model)
    return version is None or version < ADAPTIVE_FROM


def _think(
    payload: dict[str, Any],
    output_config: dict[str, Any],
    effort: Effort,
    model: str,
    max_output_tokens: int | None,
    repairs: list[Repair],
) -> None:
    """``thinking`` for ``effort``. With thinking on, the turn of the current tool loop must open with its
    thinking; a history whose loop turn has none (another model wrote it) is sent with thinking off."""
    version = claude_version(model)
    if version is not None and version < THINKING_FROM:
        repairs.append(Repair("effort-unsupported", f"anthropic: {model} does not think; the variant is not sent"))
        return
    if effort.off:
        payload["thinking"] = {"type": "disabled"}
        return
    turns = payload["messages"]
    in_loop = len(turns) > 1 and turns[-1]["content"][0]["type"] == "tool_result"
    if in_loop and turns[-2]["content"][0]["type"] not in ("thinking", "redacted_thinking"):
        repairs.append(
            Repair("thinking-off", "anthropic: the current tool loop's turn holds no thinking to replay; thinking off")
        )
        return
    if version is not None and version >= ADAPTIVE_FROM:
        payload["thinking"] = {"type": "adaptive"}
        output_config["effort"] = EFFORT_LEVELS[effort.as_level()]
        return
    budget = max(effort.as_budget(), MIN_THINKING_BUDGET)
    if max_output_tokens is None:
        payload["max_tokens"] = budget + DEFAULT_MAX_TOKENS
    elif budget >= max_output_tokens:
        if max_output_tokens - 1 < MIN_THINKING_BUDGET:
            repairs.append(
                Repair("thinking-off", f"anthropic: maxOutputTokens {max_output_tokens} leaves no room to think")
            )
            return
        repairs.append(Repair("thinking-budget", f"anthropic: thinking budget {budget} cut to {max_output_tokens - 1}"))
        budget = max_output_tokens - 1
    payload["thinking"] = {"type": "enabled", "budget_tokens": budget}


def _fit_tool_ids(turns: list[dict[str, Any]], given: list[str]) -> list[Repair]:
    """The blocks carry tool ids as given (``given`` holds them all). When every one fits, a ``ToolIdMap`` keeps
    each, so the payload stands as built; otherwise each id is mapped here in payload order, which is history
    order, the order the map must see them in (it decides which of two clashing ids keeps its text)."""
    if all_kept(given, MAX_TOOL_USE_ID):
        return []
    ids = ToolIdMap(MAX_TOOL_USE_ID, "anthropic")
    for turn in turns:
        for block in turn["content"]:
            if block["type"] in ("tool_use", "server_tool_use"):
                block["id"] = ids(block["id"])
            elif "tool_use_id" in block:
                block["tool_use_id"] = ids(block["tool_use_id"])
    return ids.repairs()


def _next_role(messages: list[dict[str, Any]], index: int) -> str | None:
    return messages[index + 1]["role"] if index + 1 < len(messages) else None


def _add(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]], repairs: list[Repair]) -> None:
    """Append a turn, merging it into the previous one of the same role (roles must alternate). ``blocks`` is
    always a list built for this call, so a new turn takes it as its content without a copy."""
    if turns and turns[-1]["role"] == role:
        # Text after tool results in one user turn is Anthropic's own shape, not a repair worth reporting.
        if turns[-1]["content"][0]["type"] != "tool_result":
            repairs.append(Repair("merged-turns", f"anthropic: merged consecutive {role} turns"))
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _assistant_blocks(
    parts: list[Any], tool_ids: list[str], media: list[Media], repairs: list[Repair]
) -> list[dict[str, Any]]:
    """The turn's blocks in Anthropic's order (thinking, text, tool_use); its call ids go on ``tool_ids``, its
    files on ``media`` (to be moved to the next user turn)."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        # The common turn, text then calls, is already in order and has nothing to repair: its blocks are
        # built in one pass. Anything else takes the general path, which records the call ids seen so far
        # again (harmless: ``tool_ids`` is only ever checked as a whole).
        part_type = part["type"]
        if part_type == "tool-call" and "providerExecuted" not in part:
            call_id = part["toolCallId"]
            tool_ids.append(call_id)
            blocks.append({"type": "tool_use", "id": call_id, "name": part["toolName"], "input": part["input"]})
        elif part_type == "text" and (not blocks or blocks[-1]["type"] == "text"):
            blocks.append({"type": "text", "text": part["text"]})
        else:
            return _ordered_assistant_blocks(parts, tool_ids, media, repairs)
    return blocks


def _ordered_assistant_blocks(
    parts: list[Any], tool_ids: list[str], media: list[Media], repairs: list[Repair]
) -> list[dict[str, Any]]:
    """Any turn: blocks sorted into Anthropic's order, unsigned reasoning dropped, each repair reported. The
    blocks of tools Anthropic ran stay among the texts, in their order (text cites the results before it)."""
    thinking: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    uses: list[dict[str, Any]] = []
    order_changed = False
    server_blocks = _server_blocks(parts, repairs)
    for part in parts:
        if part.get("providerExecuted") or part["type"] == "tool-result":
            block = server_blocks.get((part["type"], part["toolCallId"]))
            if block is not None:
                order_changed = order_changed or bool(uses)
                if block["type"] == "server_tool_use":
                    tool_ids.append(block["id"])
                texts.append(block)
            continue
        match part["type"]:
            case "reasoning":
                block = _thinking(part)
                if block is None:
                    repairs.append(
                        Repair(
                            "reasoning-dropped", "anthropic: reasoning without an Anthropic signature is not replayed"
                        )
                    )
                    continue
                order_changed = order_changed or bool(texts or uses)
                thinking.append(block)
            case "text":
                order_changed = order_changed or bool(uses)
                texts.append({"type": "text", "text": part["text"]})
            case "file":
                media.append(part_media(part))
            case "tool-call":
                tool_ids.append(part["toolCallId"])
                uses.append(
                    {"type": "tool_use", "id": part["toolCallId"], "name": part["toolName"], "input": part["input"]}
                )
            case other:
                unsettled("anthropic", f"an assistant {other!r} part")
    if order_changed:
        repairs.append(Repair("assistant-block-order", "anthropic: thinking first, then text, then tool_use"))
    if thinking and not texts and not uses:
        repairs.append(
            Repair(
                "thinking-only-turn",
                "anthropic: dropped an assistant turn that only thought (it cannot end on thinking)",
            )
        )
        return []
    return thinking + texts + uses


def _server_blocks(parts: list[Any], repairs: list[Repair]) -> dict[tuple[str, str], dict[str, Any]]:
    """The blocks of the tools Anthropic ran in this turn, by (part type, call id): a call and its result go
    in together or not at all (one without the other is a 400)."""
    calls = {p["toolCallId"]: p for p in parts if p["type"] == "tool-call" and p.get("providerExecuted")}
    blocks: dict[tuple[str, str], dict[str, Any]] = {}
    for result in (p for p in parts if p["type"] == "tool-result"):
        call = calls[result["toolCallId"]]
        use = _server_tool_use(call)
        outcome = _server_tool_result(use["name"], result) if use is not None else None
        if use is None or outcome is None:
            repairs.append(
                Repair(
                    "provider-tool-dropped", f"anthropic: {call['toolName']} ran by a provider has no Anthropic form"
                )
            )
            continue
        blocks[("tool-call", call["toolCallId"])] = use
        blocks[("tool-result", call["toolCallId"])] = outcome
    return blocks


def _server_tool_use(call: dict[str, Any]) -> dict[str, Any] | None:
    """``server_tool_use``, named as Anthropic named it: code execution's bash and editor sub-tools are written
    as a ``code_execution`` call whose input names them (``input.type``)."""
    name, given = call["toolName"], call["input"]
    if name == "code_execution" and given.get("type") in ("bash_code_execution", "text_editor_code_execution"):
        name = given["type"]
    elif name not in SERVER_TOOLS:
        return None
    return {"type": "server_tool_use", "id": call["toolCallId"], "name": name, "input": given}


def _server_tool_result(name: str, result: dict[str, Any]) -> dict[str, Any] | None:
    """The result block of a server tool, from its stored output: the AI SDK's camelCase form or Anthropic's own
    snake_case content, as importers keep it. ``None`` when the output is not one Anthropic could have sent."""
    output = result["output"]
    value = output.get("value")
    failed = output["type"] in ("error-json", "error-text")
    block: dict[str, Any] = {"tool_use_id": result["toolCallId"]}
    if name in ("bash_code_execution", "text_editor_code_execution"):
        content = value if isinstance(value, dict) and str(value.get("type", "")).startswith(name) else None
        return None if content is None else {"type": f"{name}_tool_result", **block, "content": content}
    if failed or (isinstance(value, dict) and str(value.get("type", "")).endswith("_error")):
        code = _pick(value, "errorCode", "error_code") if isinstance(value, dict) else None
        error = {"type": f"{name}_tool_result_error", "error_code": code or "unavailable"}
        return {"type": f"{name}_tool_result", **block, "content": error}
    if output["type"] != "json":
        return None
    match name:
        case "web_search":
            hits = [_search_hit(item) for item in value] if isinstance(value, list) else [None]
            if None in hits:
                return None
            return {"type": "web_search_tool_result", **block, "content": hits}
        case "web_fetch":
            fetched = _fetched(value)
            return None if fetched is None else {"type": "web_fetch_tool_result", **block, "content": fetched}
        case _:
            if not isinstance(value, dict) or value.get("type") != "code_execution_result":
                return None
            run = {key: value.get(key) for key in ("stdout", "stderr", "return_code")}
            if not (
                isinstance(run["stdout"], str)
                and isinstance(run["stderr"], str)
                and isinstance(run["return_code"], int)
            ):
                return None
            content = {"type": "code_execution_result", **run, "content": value.get("content") or []}
            return {"type": "code_execution_tool_result", **block, "content": content}


def _search_hit(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    url, title = item.get("url"), item.get("title")
    encrypted = _pick(item, "encryptedContent", "encrypted_content")
    if not (isinstance(url, str) and isinstance(title, str) and isinstance(encrypted, str)):
        return None
    hit = {"type": "web_search_result", "url": url, "title": title, "encrypted_content": encrypted}
    age = _pick(item, "pageAge", "page_age")
    if isinstance(age, str):
        hit["page_age"] = age
    return hit


def _fetched(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict) or not isinstance(value.get("url"), str):
        return None
    document = value.get("content")
    if not isinstance(document, dict):
        return None
    source = document.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("data"), str):
        return None
    fetched: dict[str, Any] = {
        "type": "web_fetch_result",
        "url": value["url"],
        "content": {
            "type": "document",
            "source": {
                "type": source.get("type", "text"),
                "media_type": _pick(source, "mediaType", "media_type") or "text/plain",
                "data": source["data"],
            },
        },
    }
    if isinstance(document.get("title"), str):
        fetched["content"]["title"] = document["title"]
    retrieved = _pick(value, "retrievedAt", "retrieved_at")
    if isinstance(retrieved, str):
        fetched["retrieved_at"] = retrieved
    return fetched


def _pick(item: dict[str, Any], *keys: str) -> Any:
    return next((item[key] for key in keys if item.get(key) is not None), None)


def _thinking(part: dict[str, Any]) -> dict[str, Any] | None:
    options = (part.get("providerOptions") or {}).get("anthropic") or {}
    if isinstance(options.get("signature"), str) and options["signature"]:
        return {"type": "thinking", "thinking": part["text"], "signature": options["signature"]}
    if isinstance(options.get("redactedData"), str) and options["redactedData"]:
        return {"type": "redacted_thinking", "data": options["redactedData"]}
    return None


def _user_block(part: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    match part["type"]:
        case "text":
            return {"type": "text", "text": part["text"]}
        case "image" | "file":
            return _media_block(part_media(part), repairs)
        case other:
            unsettled("anthropic", f"a user {other!r} part")


def _media_block(media: Media, repairs: list[Repair]) -> dict[str, Any]:
    source: dict[str, Any]
    if media.url is not None:
        source = {"type": "url", "url": media.url}
    else:
        source = {"type": "base64", "media_type": media.media_type, "data": media.base64}
    if media.media_type in IMAGE_TYPES and media.decoded_size > MAX_IMAGE_BYTES:
        repairs.append(Repair("image-too-large", f"anthropic: {media.describe()} is over 5 MB; said so in text"))
        return {"type": "text", "text": f"[Image {media.describe()} omitted: over Anthropic's 5 MB limit per image]"}
    if media.media_type in IMAGE_TYPES:
        return {"type": "image", "source": source}
    if media.media_type == "application/pdf":
        return {"type": "document", "source": source}
    repairs.append(Repair("media-as-text", f"anthropic: cannot send {media.describe()}; said so in text"))
    return {"type": "text", "text": unreadable(media)}


def _tool_results(parts: list[dict[str, Any]], tool_ids: list[str], repairs: list[Repair]) -> list[dict[str, Any]]:
    """A tool message's ``tool_result`` blocks; its ids go on ``tool_ids``. One loop, not a call per result."""
    blocks = []
    for part in parts:
        tool_use_id = part["toolCallId"]
        tool_ids.append(tool_use_id)
        output = part["output"]
        blocks.append(_text_result(tool_use_id, output) or _read_result(tool_use_id, output, repairs))
    return blocks


def _text_result(tool_use_id: str, output: dict[str, Any]) -> dict[str, Any] | None:
    """The common text result, built as ``_read_result`` builds it (one text item; an empty one is "(no
    output)") without reading the output in general; ``None`` for any other output."""
    output_type = output.get("type")
    if output_type == "error-text":
        texts = [{"type": "text", "text": str(output.get("value"))}]
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": texts, "is_error": True}
    if output_type == "text":
        texts = [{"type": "text", "text": str(output.get("value")) or NO_OUTPUT}]
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": texts}
    return None


def _read_result(tool_use_id: str, raw: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    output = read_output(raw)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
    if output.is_error:
        # Error results carry text only; media are named in the text.
        block["content"] = [{"type": "text", "text": output.text}]
        block["is_error"] = True
        return block
    content: list[dict[str, Any]] = []
    for item in output.items:
        if isinstance(item, str):
            if item.strip():
                content.append({"type": "text", "text": item})
        elif item.media_type in IMAGE_TYPES:
            content.append(_media_block(item, repairs))
        else:
            repairs.append(Repair("media-as-text", f"anthropic: a tool result's {item.describe()} named in text"))
            content.append({"type": "text", "text": f"[attached: {item.describe()}]"})
    block["content"] = content or [{"type": "text", "text": output.texts_only}]
    return block


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    definition: dict[str, Any] = {"name": tool.name, "input_schema": tool.input_schema}
    if tool.description:
        definition["description"] = tool.description
    return definition
