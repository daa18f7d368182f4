"""The rules no published type can see: pairing, order, emptiness, ids, alternation, the last turn.

One checker per provider, each returning the provider's own 400 wording for every rule a payload breaks, and
``[]`` for a payload the provider would accept. Used with the type checks in sdk_types.py by every payload
test.
"""

import json
import re
from typing import Any

import orjson

from app.context.catalog import bundled_catalog, default_max_output_tokens
from app.engine.model_ref import model_ref

_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_SAFE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _blank(text: Any) -> bool:
    return not isinstance(text, str) or not text.strip()


# Every provider -------------------------------------------------------------------------------------------

NUL_REFUSED_BY = frozenset({"openai", "openai-responses", "ai-sdk"})
"""The targets that must get no NUL character: the OpenAI shape is what locally served models take too, where a
NUL ends a C string; the AI SDK hands its messages on to any provider."""


def sendable_text(provider: str, payload: dict[str, Any]) -> list[str]:
    """A request body is UTF-8 JSON: no unpaired surrogate (Anthropic's parser answers "no low surrogate in
    string"); and no NUL for the targets above."""
    try:
        orjson.dumps(payload)
    except orjson.JSONEncodeError:
        return ["The request body is not valid JSON: no low surrogate in string"]
    if provider in NUL_REFUSED_BY and any("\x00" in text for text in _strings(payload)):
        return [f"{provider}: a string holds a NUL character"]
    return []


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(text for item in value.values() for text in _strings(item))]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


# OpenAI Chat Completions ----------------------------------------------------------------------------------


def openai_chat(payload: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    messages = payload.get("messages") or []
    if not messages:
        return ["Invalid 'messages': empty array. Expected an array with minimum length 1"]
    pending: list[str] = []
    answered_here: set[str] = set()
    for n, message in enumerate(messages):
        role = message.get("role")
        if role != "tool" and pending:
            errors.append(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}"
            )
            pending = []
        content = message.get("content")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                errors.append(
                    f"messages.[{n}].role: messages with role 'tool' must be a response to a preceeding message "
                    f"with 'tool_calls' ({call_id!r})"
                )
            else:
                pending.remove(call_id)
            if _blank(content if isinstance(content, str) else None) and not isinstance(content, list):
                errors.append(f"messages[{n}].content: empty tool content")
            continue
        if role == "assistant":
            calls = message.get("tool_calls")
            if calls is not None and not calls:
                errors.append(f"Invalid 'messages[{n}].tool_calls': empty array.")
            if content is None and not calls:
                errors.append(f"Invalid value for 'messages[{n}].content': expected a string, got null.")
            for m, call in enumerate(calls or []):
                call_id, function = call.get("id", ""), call.get("function", {})
                if len(call_id) > 40:
                    errors.append(
                        f"Invalid 'messages[{n}].tool_calls[{m}].id': string too long. Expected a string with "
                        f"maximum length 40, but got a string with length {len(call_id)} instead."
                    )
                if call_id in answered_here:
                    errors.append(f"messages[{n}].tool_calls[{m}].id: duplicate tool call id {call_id!r}")
                answered_here.add(call_id)
                if not function.get("name"):
                    errors.append(f"Invalid 'messages[{n}].tool_calls[{m}].function.name': empty string.")
                elif not _FUNCTION_NAME.fullmatch(function["name"]):
                    errors.append(
                        f"Invalid 'messages[{n}].tool_calls[{m}].function.name': string does not match pattern. "
                        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
                    )
                try:
                    if not isinstance(json.loads(function.get("arguments", "")), dict):
                        errors.append(f"messages[{n}].tool_calls[{m}].function.arguments: not a JSON object")
                except (TypeError, ValueError):
                    errors.append(f"messages[{n}].tool_calls[{m}].function.arguments: not JSON")
                pending.append(call_id)
        if isinstance(content, str) and _blank(content):
            errors.append(f"messages[{n}].content: empty or whitespace-only text")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url" and role != "user":
                errors.append(
                    f"Invalid 'messages[{n}]'. Image URLs are only allowed for messages with role 'user', but this "
                    f"message with role '{role}' contains an image URL."
                )
            if part.get("type") == "text" and _blank(part.get("text")):
                errors.append(f"messages[{n}].content: empty or whitespace-only text")
        if isinstance(content, list) and not content:
            errors.append(f"messages[{n}].content: empty array")
    if pending:
        errors.append(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}"
        )
    if messages[-1].get("role") == "assistant":
        errors.append("messages: the conversation must not end on an assistant message")
    return errors


# OpenAI Responses -----------------------------------------------------------------------------------------


def openai_responses(payload: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    items = payload.get("input") or []
    if not items:
        return ["input: must be non-empty"]
    open_calls: dict[str, int] = {}
    seen_calls: set[str] = set()
    for n, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call":
            call_id = item.get("call_id", "")
            if not _FUNCTION_NAME.fullmatch(item.get("name", "")):
                errors.append(f"Invalid 'input[{n}].name': string does not match pattern '^[a-zA-Z0-9_-]+$'.")
            if len(call_id) > 64:
                errors.append(
                    f"Invalid 'input[{n}].call_id': string too long. Expected a string with maximum length 64"
                )
            if call_id in seen_calls:
                errors.append(f"input[{n}].call_id: duplicate call id {call_id!r}")
            seen_calls.add(call_id)
            open_calls[call_id] = n
            try:
                if not isinstance(json.loads(item.get("arguments", "")), dict):
                    errors.append(f"input[{n}].arguments: not a JSON object")
            except (TypeError, ValueError):
                errors.append(f"input[{n}].arguments: not JSON")
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in open_calls:
                errors.append(f"No tool call found for function call output with call_id {call_id}.")
            else:
                del open_calls[call_id]
            output = item.get("output")
            if (isinstance(output, str) and _blank(output)) or (isinstance(output, list) and not output):
                errors.append(f"input[{n}].output: empty")
        elif kind == "reasoning":
            following = items[n + 1] if n + 1 < len(items) else None
            produced = following is not None and (
                following.get("type") in ("function_call", "item_reference")
                or (following.get("type") == "message" and following.get("role") == "assistant")
            )
            if not produced:
                errors.append(
                    f"Item '{item.get('id')}' of type 'reasoning' was provided without its required following item."
                )
        elif kind == "message":
            if open_calls:
                errors.append(f"No tool output found for function call {', '.join(open_calls)}.")
                open_calls.clear()
            content = item.get("content")
            if (isinstance(content, str) and _blank(content)) or (isinstance(content, list) and not content):
                errors.append(f"input[{n}].content: empty")
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "input_text" and _blank(part.get("text")):
                    errors.append(f"input[{n}].content: empty or whitespace-only text")
    if open_calls:
        errors.append(f"No tool output found for function call {', '.join(open_calls)}.")
    last = items[-1]
    if (last.get("type") == "message" and last.get("role") == "assistant") or last.get("type") == "function_call":
        errors.append("input: the conversation must not end on an assistant item")
    return errors


# Anthropic Messages ---------------------------------------------------------------------------------------


def anthropic(payload: dict[str, Any], *, prefill: bool = False) -> list[str]:
    errors: list[str] = []
    messages = payload.get("messages") or []
    if not messages:
        return ["messages: at least one message is required"]
    if "max_tokens" not in payload:
        errors.append("max_tokens: Field required")
    if messages[0].get("role") != "user":
        errors.append('messages: first message must use the "user" role')
    errors += _anthropic_ending(payload, messages, prefill)
    errors += _anthropic_thinking(payload, messages)
    errors += _cache_marks(payload, sdk=False)
    use_ids: set[str] = set()
    any_tool_blocks = False
    for n, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if not blocks:
            errors.append(
                f"messages.{n}: all messages must have non-empty content except for the optional final "
                "assistant message"
            )
            continue
        if n and messages[n - 1].get("role") == role:
            errors.append(
                'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
        for m, block in enumerate(blocks):
            if block.get("type") == "text" and _blank(block.get("text")):
                errors.append(f"messages.{n}.content.{m}: text content blocks must contain non-whitespace text")
            if block.get("type") == "tool_result":
                any_tool_blocks = True
                inner_content = block.get("content")
                inner_blocks = (
                    [{"type": "text", "text": inner_content}] if isinstance(inner_content, str) else inner_content
                )
                for inner in inner_blocks or []:
                    if inner.get("type") == "text" and _blank(inner.get("text")):
                        errors.append(f"messages.{n}.content.{m}: text content blocks must contain non-whitespace text")
                    if block.get("is_error") and inner.get("type") != "text":
                        errors.append(f"messages.{n}.content.{m}: an error tool_result carries text only")
        if role != "assistant":
            continue
        types = [block.get("type") for block in blocks]
        thinks = any(kind in ("thinking", "redacted_thinking") for kind in types)
        if thinks and types[0] not in ("thinking", "redacted_thinking"):
            errors.append(
                f"messages.{n}.content.0: If an assistant message contains any thinking blocks, the first block "
                f"must be thinking or redacted_thinking. Found {types[0]}."
            )
        if types[-1] in ("thinking", "redacted_thinking"):
            errors.append(f"messages.{n}: The final block in an assistant message cannot be `thinking`.")
        if "tool_use" in types and "text" in types[types.index("tool_use") :]:
            errors.append(f"messages.{n}: text after tool_use (tool_use blocks must end the turn)")
        uses = [block["id"] for block in blocks if block.get("type") == "tool_use"]
        any_tool_blocks = any_tool_blocks or bool(uses)
        for use_id in uses:
            if not _ANTHROPIC_ID.match(use_id) or len(use_id) > 64:
                errors.append(f"messages.{n}.content.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
            if use_id in use_ids:
                errors.append(f"messages.{n}: `tool_use` ids must be unique")
            use_ids.add(use_id)
        following = messages[n + 1] if n + 1 < len(messages) else None
        next_blocks = following.get("content") if following else []
        next_blocks = next_blocks if isinstance(next_blocks, list) else []
        leading: list[str] = []
        for block in next_blocks:
            if block.get("type") != "tool_result":
                break
            leading.append(block.get("tool_use_id"))
        if uses:
            missing = [use for use in uses if use not in leading]
            if missing:
                errors.append(
                    f"messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in "
                    "the next message."
                )
            if len(leading) != len(uses) or len(set(leading)) != len(leading):
                errors.append(
                    f"messages.{n + 1}: Did not find {len(uses)} `tool_result` block(s) at the beginning of this "
                    "message. Messages following `tool_use` blocks must begin with a matching number of "
                    "`tool_result` blocks."
                )
    for n, message in enumerate(messages):
        content = message.get("content")
        previous = messages[n - 1] if n else None
        previous_uses = {
            block.get("id")
            for block in (previous.get("content") if previous and isinstance(previous.get("content"), list) else [])
            if block.get("type") == "tool_use"
        }
        for m, block in enumerate(content if isinstance(content, list) else []):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in previous_uses:
                errors.append(
                    f"messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )
    if any_tool_blocks and not payload.get("tools"):
        errors.append("tools: requests with tool_use or tool_result blocks must define tools")
    return errors + _anthropic_server_tools(messages)


def _anthropic_ending(payload: dict[str, Any], messages: list[dict[str, Any]], prefill: bool) -> list[str]:
    last = messages[-1]
    if last.get("role") == "user":
        return []
    if not prefill:
        return ["This model does not support assistant message prefill. The conversation must end with a user message."]
    content = last.get("content")
    blocks: list[dict[str, Any]] = content if isinstance(content, list) else []
    errors = []
    if blocks and blocks[-1].get("type") == "text" and blocks[-1]["text"] != blocks[-1]["text"].rstrip():
        errors.append("messages: final assistant content cannot end with trailing whitespace")
    if (payload.get("thinking") or {}).get("type", "disabled") == "disabled" and any(
        block.get("type") in ("thinking", "redacted_thinking") for block in blocks
    ):
        errors.append(
            f"messages.{len(messages) - 1}.content.0: When thinking is disabled, an `assistant` message in the final "
            "position cannot contain `thinking`."
        )
    return errors


def _anthropic_thinking(payload: dict[str, Any], messages: list[dict[str, Any]]) -> list[str]:
    thinking = payload.get("thinking") or {}
    if thinking.get("type") not in ("enabled", "adaptive"):
        return []
    errors = []
    if thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens", 0)
        if budget < 1024:
            errors.append("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if budget >= payload.get("max_tokens", 0):
            errors.append("`max_tokens` must be greater than `thinking.budget_tokens`.")
    last = messages[-1]
    content = last.get("content") if isinstance(last.get("content"), list) else []
    if len(messages) > 1 and content and content[0].get("type") == "tool_result":
        turn = messages[-2].get("content") or [{}]
        if turn[0].get("type") not in ("thinking", "redacted_thinking"):
            errors.append(
                f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                f"`{turn[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must start with a "
                "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks)."
            )
    return errors


def _anthropic_server_tools(messages: list[dict[str, Any]]) -> list[str]:
    """A server tool's call and its result sit in one assistant turn, the call first."""
    errors = []
    for n, message in enumerate(messages):
        given = message.get("content")
        content: list[dict[str, Any]] = given if isinstance(given, list) else []
        open_uses: list[str] = []
        for block in content:
            kind = block.get("type", "")
            if kind == "server_tool_use":
                open_uses.append(str(block.get("id")))
            elif kind.endswith("_tool_result") and kind != "tool_result":
                if block.get("tool_use_id") not in open_uses:
                    errors.append(f"messages.{n}: {kind} {block.get('tool_use_id')!r} without its server_tool_use")
                else:
                    open_uses.remove(block["tool_use_id"])
        if open_uses:
            errors.append(f"messages.{n}: server_tool_use ids without their results: {', '.join(open_uses)}")
    return errors


# Gemini generateContent -----------------------------------------------------------------------------------

_GEMINI_DATA = (
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
)


_GEMINI_IMAGES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
"""The image types Gemini's documentation lists; it answers any other with "Unsupported MIME type"."""


def gemini(payload: dict[str, Any], *, model: str = "") -> list[str]:
    errors: list[str] = []
    if "cachedContent" in payload and any(key in payload for key in ("systemInstruction", "tools", "toolConfig")):
        errors.append(
            "CachedContent can not be used with GenerateContent request setting system_instruction, tools or "
            "tool_config. Proposed fix: move those values to CachedContent from GenerateContent request."
        )
    contents = payload.get("contents") or []
    if not contents:
        return [*errors, "* GenerateContentRequest.contents: contents is not specified"]
    if contents[0].get("role") != "user":
        errors.append(
            "Please ensure that function call turn comes immediately after a user turn or after a function "
            "response turn."
        )
    if contents[-1].get("role") != "user":
        errors.append("contents: the history must not end on a model turn")
    for n, content in enumerate(contents):
        role, parts = content.get("role"), content.get("parts") or []
        if role not in ("user", "model"):
            errors.append(f"contents[{n}].role: must be user or model")
        if not parts:
            errors.append(f"* GenerateContentRequest.contents[{n}].parts: contents.parts must not be empty.")
        if n and contents[n - 1].get("role") == role:
            errors.append(f"contents[{n}]: roles must alternate between user and model")
        for m, part in enumerate(parts):
            fields = [key for key in _GEMINI_DATA if key in part]
            if len(fields) != 1:
                errors.append(
                    f"contents[{n}].parts[{m}].data: required oneof field 'data' must have one initialized field"
                )
            if "text" in part and _blank(part["text"]):
                errors.append(f"contents[{n}].parts[{m}].text: empty text part")
            mime = str(part.get("inlineData", part.get("fileData", {})).get("mimeType", ""))
            if mime.startswith("image/") and mime not in _GEMINI_IMAGES:
                errors.append(f"contents[{n}].parts[{m}]: Unsupported MIME type: {mime}")
            if "functionResponse" in part and not isinstance(part["functionResponse"].get("response"), dict):
                errors.append(f"contents[{n}].parts[{m}].functionResponse.response: must be an object")
        calls = [part["functionCall"] for part in parts if "functionCall" in part]
        responses = [part["functionResponse"] for part in parts if "functionResponse" in part]
        if calls:
            if role != "model":
                errors.append(f"contents[{n}]: functionCall outside a model turn")
            if model.startswith("gemini-3") and "thoughtSignature" not in next(p for p in parts if "functionCall" in p):
                errors.append(
                    "Function call is missing a thought_signature in functionCall parts. This is required for tools "
                    "to work correctly"
                )
            following = contents[n + 1] if n + 1 < len(contents) else None
            answers = [p["functionResponse"] for p in (following or {}).get("parts", []) if "functionResponse" in p]
            if len(answers) != len(calls):
                errors.append(
                    "Please ensure that the number of function response parts is equal to the number of function "
                    "call parts of the function call turn."
                )
            elif [a.get("name") for a in answers] != [c.get("name") for c in calls]:
                errors.append(f"contents[{n + 1}]: function responses do not name the calls they answer")
        if responses:
            previous = contents[n - 1] if n else {}
            if not any("functionCall" in p for p in previous.get("parts", [])):
                errors.append("Please ensure that function response turn comes immediately after a function call turn.")
    return errors


# AI SDK ModelMessage[] ------------------------------------------------------------------------------------


def _cache_marks(payload: dict[str, Any], sdk: bool) -> list[str]:
    """Anthropic takes at most four cache breakpoints, none on a thinking block or an empty text, and no 1-hour
    one after a 5-minute one in the order it reads them: tools, system, messages. ``sdk``: the marks are the
    AI SDK's, ``providerOptions.anthropic.cacheControl`` (or ``cache_control``, which its provider also reads)."""
    found: list[tuple[dict[str, Any], Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            mark = _sdk_mark(value) if sdk else value.get("cache_control")
            if mark is not None:
                found.append((value, mark))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for key in ("tools", "system", "messages"):
        walk(payload.get(key))
    errors = [f"{len(found)} cache breakpoints: A maximum of 4 blocks with cache_control may be provided"] * (
        len(found) > 4
    )
    short = False
    for block, mark in found:
        if block.get("type") in ("thinking", "redacted_thinking", "reasoning"):
            errors.append("cache_control cannot be set on a thinking block")
        if block.get("type") == "text" and _blank(block.get("text")):
            errors.append("cache_control cannot be set on an empty text block")
        hour = isinstance(mark, dict) and mark.get("ttl") == "1h"
        if hour and short:
            errors.append(
                "cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control "
                "block. Note that blocks are processed in the following order: `tools`, `system`, `messages`."
            )
        short = short or not hour
    return errors


def _sdk_mark(value: dict[str, Any]) -> Any:
    options = value.get("providerOptions")
    anthropic = options.get("anthropic") if isinstance(options, dict) else None
    if not isinstance(anthropic, dict):
        return None
    mark = anthropic.get("cacheControl")
    return mark if mark is not None else anthropic.get("cache_control")


def ai_sdk(payload: dict[str, Any], *, prefill: bool = False) -> list[str]:
    """What the SDK's pre-flight lets through but its providers reject downstream."""
    errors: list[str] = _cache_marks(payload, sdk=True)
    messages = payload.get("messages") or []
    if not messages:
        return ["Invalid prompt: messages must not be empty"]
    pending: list[str] = []
    seen: set[str] = set()
    for n, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        executed: list[str] = []
        if role == "system":
            errors.append(f"messages[{n}]: system text belongs in the system option")
            continue
        if not content:
            errors.append(f"messages[{n}].content: empty content")
        if pending and role != "tool":
            errors.append(f"Tool results are missing for tool calls {', '.join(pending)}.")
            pending = []
        for part in content if isinstance(content, list) else []:
            kind = part.get("type")
            if kind == "text" and _blank(part.get("text")):
                errors.append(f"messages[{n}]: empty or whitespace-only text part")
            if kind == "tool-call":
                call_id = part.get("toolCallId", "")
                if not _SAFE_ID.match(call_id) or len(call_id) > 40:
                    errors.append(f"messages[{n}]: tool call id {call_id!r} is not safe for every provider")
                if call_id in seen:
                    errors.append(f"messages[{n}]: duplicate tool call id {call_id!r}")
                seen.add(call_id)
                if part.get("providerExecuted"):
                    executed.append(call_id)
                else:
                    pending.append(call_id)
            if kind == "tool-result" and role == "assistant":
                if part.get("toolCallId") not in executed:
                    errors.append(f"messages[{n}]: assistant tool result {part.get('toolCallId')!r} answers no call")
            elif kind == "tool-result":
                if part.get("toolCallId") not in pending:
                    errors.append(f"messages[{n}]: tool result {part.get('toolCallId')!r} answers no pending call")
                else:
                    pending.remove(part["toolCallId"])
    if pending:
        errors.append(f"Tool results are missing for tool calls {', '.join(pending)}.")
    if messages[-1].get("role") == "assistant" and not prefill:
        errors.append("messages: the conversation must not end on an assistant message")
    if messages[0].get("role") != "user":
        errors.append('messages: first message must use the "user" role')
    return errors + _ai_sdk_downstream(payload, bool(seen))


def _ai_sdk_downstream(payload: dict[str, Any], calls: bool) -> list[str]:
    """What the provider the SDK forwards to refuses: Claude a history of calls with no tools defined, and a
    thinking budget at or past the answer's room (the SDK caps ``max_tokens`` at the model's limit)."""
    model = str(payload.get("model", ""))
    target = model_ref(model)
    errors = []
    if calls and not payload.get("tools") and (target is None or target.family not in ("openai", "google")):
        errors.append("Requests which include `tool_use` or `tool_result` blocks must define tools.")
    budget = (((payload.get("providerOptions") or {}).get("anthropic") or {}).get("thinking") or {}).get("budgetTokens")
    room = payload.get("maxOutputTokens") or default_max_output_tokens(bundled_catalog(), "ai-sdk", model)
    if budget is not None and room is not None and budget >= room:
        errors.append("`max_tokens` must be greater than `thinking.budget_tokens`.")
    return errors


RULES = {
    "openai": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
    "ai-sdk": ai_sdk,
}
