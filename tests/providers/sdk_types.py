"""Payloads validated against the providers' own published types (openai, anthropic, google-genai).

Two traps of validating with the SDK types are handled here:
- ``Iterable[...]`` fields of the SDK TypedDicts validate lazily: results are materialised while their
  ``TypeAdapter`` is alive (adapters live in a module-level cache; a collected one panics on iteration).
- TypedDicts ignore unknown keys, which the APIs reject: every dict is walked against its TypedDict's keys.
Messages and blocks are also validated one by one against the single TypedDict their role/type names, so a
failure reads like the provider's message instead of one error per union member.
"""

import collections.abc
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from anthropic.types import (
    BashCodeExecutionToolResultBlockParam,
    CodeExecutionToolResultBlockParam,
    DocumentBlockParam,
    ImageBlockParam,
    RedactedThinkingBlockParam,
    ServerToolUseBlockParam,
    TextBlockParam,
    TextEditorCodeExecutionToolResultBlockParam,
    ThinkingBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    WebFetchToolResultBlockParam,
    WebSearchToolResultBlockParam,
)
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from google.genai import types as gemini_types
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses import (
    EasyInputMessageParam,
    FunctionToolParam,
    ResponseFunctionToolCallParam,
    ResponseReasoningItemParam,
)
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from openai.types.responses.response_input_item_param import FunctionCallOutput, ItemReference
from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import is_typeddict

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}
_HINTS: dict[Any, dict[str, Any]] = {}
"""Kept for the whole run: iterating a ValidatorIterator whose adapter was collected panics."""


def materialize(value: Any) -> Any:
    if type(value).__name__ == "ValidatorIterator":  # not importable from pydantic_core
        return [materialize(item) for item in value]
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [materialize(item) for item in value]
    return value


def validate(value: Any, annotation: Any, where: str) -> list[str]:
    """Structure errors (materialised) and unknown keys of ``value`` against an SDK type."""
    adapter = _ADAPTERS.get(annotation)
    if adapter is None:
        adapter = _ADAPTERS[annotation] = TypeAdapter(annotation)
    try:
        materialize(adapter.validate_python(value))
    except ValidationError as error:
        return [f"{where}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:3]]
    return extra_keys(value, annotation, where)


def _hints(typed_dict: Any) -> dict[str, Any]:
    """Resolving annotations is slow and the SDK types never change: once per TypedDict."""
    if typed_dict not in _HINTS:
        _HINTS[typed_dict] = get_type_hints(typed_dict)
    return _HINTS[typed_dict]


def extra_keys(value: Any, annotation: Any, where: str) -> list[str]:
    """Keys the TypedDict that ``value`` matches does not declare, anywhere inside it."""
    origin = get_origin(annotation)
    if is_typeddict(annotation):
        if not isinstance(value, dict):
            return []
        allowed = annotation.__required_keys__ | annotation.__optional_keys__
        errors = [f"{where}.{key}: Extra inputs are not permitted" for key in value if key not in allowed]
        hints = _hints(annotation)
        for key, item in value.items():
            if key in hints:
                errors += extra_keys(item, hints[key], f"{where}.{key}")
        return errors
    if origin in (Union, types.UnionType):
        members = [member for member in get_args(annotation) if _accepts(member, value)]
        typed = [member for member in members if is_typeddict(member)] or members
        if not typed:
            return []
        return min((extra_keys(value, member, where) for member in typed), key=len)
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence, typing.Iterable) and isinstance(
        value, list
    ):
        (item_type,) = get_args(annotation) or (Any,)
        return [error for n, item in enumerate(value) for error in extra_keys(item, item_type, f"{where}.{n}")]
    return []


def _accepts(member: Any, value: Any) -> bool:
    if is_typeddict(member):
        if not isinstance(value, dict) or not member.__required_keys__ <= set(value):
            return False
        hints = _hints(member)
        for key, hint in hints.items():
            if get_origin(hint) is Literal and key in value and value[key] not in get_args(hint):
                return False
        return True
    origin = get_origin(member) or member
    if isinstance(origin, type) and issubclass(origin, BaseModel):
        return isinstance(value, dict)
    if origin in (list, collections.abc.Iterable, typing.Iterable, collections.abc.Sequence):
        return isinstance(value, list)
    return isinstance(origin, type) and isinstance(value, origin)


# OpenAI Chat Completions ----------------------------------------------------------------------------------

_CHAT_ROLES = {
    "system": ChatCompletionSystemMessageParam,
    "user": ChatCompletionUserMessageParam,
    "assistant": ChatCompletionAssistantMessageParam,
    "tool": ChatCompletionToolMessageParam,
}


def openai_chat(payload: dict[str, Any]) -> list[str]:
    errors = validate(payload, CompletionCreateParamsNonStreaming, "body")
    for n, message in enumerate(payload.get("messages", [])):
        role_type = _CHAT_ROLES.get(message.get("role"))
        errors += validate(message, role_type, f"messages[{n}]") if role_type else [f"messages[{n}].role: invalid"]
    return errors


# OpenAI Responses -----------------------------------------------------------------------------------------

_RESPONSES_ITEMS = {
    "message": EasyInputMessageParam,
    "function_call": ResponseFunctionToolCallParam,
    "function_call_output": FunctionCallOutput,
    "reasoning": ResponseReasoningItemParam,
    "item_reference": ItemReference,
}


def openai_responses(payload: dict[str, Any]) -> list[str]:
    errors = validate(payload, ResponseCreateParamsNonStreaming, "body")
    for n, item in enumerate(payload.get("input", [])):
        item_type = _RESPONSES_ITEMS.get(item.get("type"))
        errors += validate(item, item_type, f"input[{n}]") if item_type else [f"input[{n}].type: invalid"]
    for n, tool in enumerate(payload.get("tools", [])):
        errors += validate(tool, FunctionToolParam, f"tools[{n}]")
    return errors


# Anthropic Messages ---------------------------------------------------------------------------------------

_ANTHROPIC_BLOCKS = {
    "text": TextBlockParam,
    "image": ImageBlockParam,
    "document": DocumentBlockParam,
    "tool_use": ToolUseBlockParam,
    "tool_result": ToolResultBlockParam,
    "thinking": ThinkingBlockParam,
    "redacted_thinking": RedactedThinkingBlockParam,
    "server_tool_use": ServerToolUseBlockParam,
    "web_search_tool_result": WebSearchToolResultBlockParam,
    "web_fetch_tool_result": WebFetchToolResultBlockParam,
    "code_execution_tool_result": CodeExecutionToolResultBlockParam,
    "bash_code_execution_tool_result": BashCodeExecutionToolResultBlockParam,
    "text_editor_code_execution_tool_result": TextEditorCodeExecutionToolResultBlockParam,
}
_ANTHROPIC_SERVER_BLOCKS = {
    name for name in _ANTHROPIC_BLOCKS if name.endswith("_tool_result") or name == "server_tool_use"
}
_ANTHROPIC_ROLE_BLOCKS = {
    "user": {"text", "image", "document", "tool_result"},
    "assistant": {"text", "thinking", "redacted_thinking", "tool_use"} | _ANTHROPIC_SERVER_BLOCKS,
}


def anthropic(payload: dict[str, Any]) -> list[str]:
    errors = validate(payload, MessageCreateParamsNonStreaming, "body")
    for n, message in enumerate(payload.get("messages", [])):
        where = f"messages.{n}"
        if set(message) - {"role", "content"}:
            errors.append(f"{where}: Extra inputs are not permitted")
        allowed = _ANTHROPIC_ROLE_BLOCKS.get(message.get("role"), set())
        content = message.get("content")
        for m, block in enumerate(content if isinstance(content, list) else []):
            block_type = block.get("type")
            if block_type not in allowed:
                errors.append(f"{where}.content.{m}: {block_type!r} not allowed in {message.get('role')}")
                continue
            errors += validate(block, _ANTHROPIC_BLOCKS[block_type], f"{where}.content.{m}")
    for n, tool in enumerate(payload.get("tools", [])):
        errors += validate(tool, ToolParam, f"tools.{n}")
    return errors


# Gemini generateContent -----------------------------------------------------------------------------------

_GEMINI_BODY = {
    "contents",
    "systemInstruction",
    "tools",
    "toolConfig",
    "generationConfig",
    "safetySettings",
    "cachedContent",
}


def gemini(payload: dict[str, Any]) -> list[str]:
    """google-genai's models forbid extra keys themselves; the request body's own keys are checked here."""
    errors = [f"body.{key}: unknown field" for key in payload if key not in _GEMINI_BODY]
    checks: list[tuple[Any, type[BaseModel], str]] = [
        (content, gemini_types.Content, f"contents[{n}]") for n, content in enumerate(payload.get("contents", []))
    ]
    if "systemInstruction" in payload:
        checks.append((payload["systemInstruction"], gemini_types.Content, "systemInstruction"))
    checks += [(tool, gemini_types.Tool, f"tools[{n}]") for n, tool in enumerate(payload.get("tools", []))]
    if "generationConfig" in payload:
        checks.append((payload["generationConfig"], gemini_types.GenerationConfig, "generationConfig"))
    if "cachedContent" in payload:
        # The SDK's config carries the body's cachedContent name.
        checks.append(({"cachedContent": payload["cachedContent"]}, gemini_types.GenerateContentConfig, "body"))
    for value, model, where in checks:
        try:
            model.model_validate(value)
        except ValidationError as error:
            errors += [f"{where}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:3]]
    return errors


SDK_CHECKS = {
    "openai": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
}
"""Type checks per provider; ``ai-sdk`` is checked by the ``ai`` package itself (tools/check-ai-sdk.mjs)."""
