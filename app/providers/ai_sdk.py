"""The ``ai-sdk`` target: arguments for the AI SDK's ``generateText``/``streamText``, as JSON.

Shape: ``{model, system?, messages: ModelMessage[], tools?: {name: {description?, inputSchema}},
maxOutputTokens?, providerOptions?, output?}``; a caller wraps each ``inputSchema`` with ``jsonSchema()`` and
``output`` (``{type: "object", schema, name?, description?}``) with ``Output.object({schema:
jsonSchema(schema), ...})``. With a cache breakpoint on it (``app.providers.caching``), ``system`` is one
system message carrying ``providerOptions.anthropic.cacheControl``, as AI SDK 6 takes it.

``model`` is the model the SDK will call, as ``provider/modelId`` (``google/gemini-3-pro-preview``,
``anthropic/claude-sonnet-4-5``, ``openai/gpt-5``): its provider is whose rules apply. The model view keeps
what belongs to that model (reasoning with its ``providerOptions``, Gemini thought signatures and OpenAI item
ids on calls and text, the calls and results of tools its provider ran) and strips what another model wrote.
Here the kept provider state is keyed where the SDK's provider reads it (``providerOptions.vertex`` for
Vertex, ``google`` for the Gemini API, ``anthropic``, ``openai``...), a Gemini 3 turn's first call without a
signature gets Google's ``skip_thought_signature_validator`` (as the native Gemini adapter does), and the
reasoning effort goes into ``providerOptions`` under that provider's name. A bare model id names no provider:
nothing a model wrote is then kept for it.

The SDK may hand these messages to any provider, so the payload keeps the strictest rules of all: system
text only in ``system`` (later notes as wrapped user text), a user turn first, tools defined wherever the
history holds calls (unless the provider is one that takes such a history without them), every call
answered by the next ``tool`` message (except the calls its provider ran, answered in the turn), ids in
``[a-zA-Z0-9_-]`` and at most 40 characters, no empty text, tool outputs in forms AI SDK v5 and v6 both
accept (text, json, error-text, error-json, and content with ``text``/``media`` items), and no cache mark but
those the cache policy places (one stored on a part is left out, as the ``anthropic`` target sends none).
"""

from typing import Any

from app.engine.model_ref import ModelRef, model_ref, provider_family
from app.projections.types import Repair
from app.providers.anthropic import (
    ADAPTIVE_FROM,
    EFFORT_LEVELS,
    MIN_THINKING_BUDGET,
    PLACEHOLDER_TOOL,
    THINKING_FROM,
    claude_version,
)
from app.providers.conversation import START, Settled, unsettled, wrap_system_note
from app.providers.gemini import SKIP_SIGNATURE, is_gemini_3, thinking_config
from app.providers.media import part_media, typed
from app.providers.openai_chat import reasons
from app.providers.request_settings import NO_SETTINGS, Effort, RequestSettings
from app.providers.tool_definitions import EMPTY_OBJECT_SCHEMA, ToolDefinition
from app.providers.tool_ids import ToolIdMap
from app.providers.tool_output import read_output

MAX_TOOL_CALL_ID = 40
"""OpenAI's limit, the tightest of the providers the SDK may forward these ids to."""
TOOL_HISTORY_WITHOUT_TOOLS = frozenset({"openai", "google"})
"""The families whose APIs take a history of tool calls in a request that defines no tools; Anthropic (and
Claude on Bedrock) refuse one, so their payloads get a placeholder tool, as the ``anthropic`` target's do."""
NAMESPACES = {"google-vertex": "vertex", "vertex": "vertex", "amazon-bedrock": "bedrock", "bedrock": "bedrock"}
"""The ``providerOptions`` key an SDK provider reads, where it is not the provider's own name."""
CACHE_MARKS = ("cacheControl", "cache_control")
"""The keys the SDK's Anthropic provider reads a cache mark from, in ``providerOptions.anthropic``."""


def to_ai_sdk(
    settled: Settled,
    *,
    model: str,
    tools: tuple[ToolDefinition, ...],
    max_output_tokens: int | None,
    settings: RequestSettings = NO_SETTINGS,
) -> tuple[dict[str, Any], list[Repair]]:
    repairs: list[Repair] = []
    ids = ToolIdMap(MAX_TOOL_CALL_ID, "ai-sdk")
    target = model_ref(model)
    provider = target.provider if target is not None else None
    namespace = sdk_namespace(provider)
    gemini_3 = target is not None and target.family == "google" and is_gemini_3(target.model or "")
    messages: list[dict[str, Any]] = []
    for message in settled.messages:
        match message["role"]:
            case "system":
                repairs.append(Repair("system-note-as-user", "ai-sdk: a later system note sent as wrapped user text"))
                messages.append(
                    {"role": "user", "content": [{"type": "text", "text": wrap_system_note(message["content"])}]}
                )
            case "user":
                content = [_user_part(_unmarked(part, repairs)) for part in message["content"]]
                messages.append({"role": "user", "content": content})
            case "assistant":
                content = _assistant(message["content"], ids, namespace, gemini_3, repairs)
                messages.append({"role": "assistant", "content": content})
            case "tool":
                results = [_result(part, ids, repairs) for part in message["content"]]
                messages.append({"role": "tool", "content": results})
            case other:
                unsettled("ai-sdk", f"a {other!r} message")
    if messages and messages[0]["role"] != "user" and settled.opens_conversation:
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": START}]})
        # Listed first, where the turn goes: what follows is listed message by message.
        repairs.insert(
            0, Repair("starts-on-assistant", f"ai-sdk: added a user turn {START!r} before the first assistant turn")
        )
    payload: dict[str, Any] = {"model": model}
    if settled.system:
        payload["system"] = settled.system
    payload["messages"] = messages
    if tools:
        payload["tools"] = {tool.name: _tool(tool) for tool in tools}
    elif (target is None or target.family not in TOOL_HISTORY_WITHOUT_TOOLS) and _holds_tool_calls(messages):
        placeholder = {"description": PLACEHOLDER_TOOL["description"], "inputSchema": EMPTY_OBJECT_SCHEMA}
        payload["tools"] = {PLACEHOLDER_TOOL["name"]: placeholder}
        repairs.append(
            Repair("tools-required", "ai-sdk: history has tool calls but no tools were given; added a placeholder tool")
        )
    if max_output_tokens is not None:
        payload["maxOutputTokens"] = max_output_tokens
    if settings.effort is not None:
        ceiling = max_output_tokens if max_output_tokens is not None else settings.output_limit
        options = _effort_options(settings.effort, target, ceiling)
        if namespace is None or options is None:
            repairs.append(Repair("effort-unsupported", f"ai-sdk: no reasoning option is known for {model}"))
        elif options.get("thinking", {}).get("type", "disabled") != "disabled" and not _loop_turn_thinks(messages):
            repairs.append(
                Repair("thinking-off", "ai-sdk: the current tool loop's turn holds no thinking to replay; thinking off")
            )
        else:
            payload["providerOptions"] = {namespace: options}
    if settings.output is not None:
        output: dict[str, Any] = {"type": "object", "schema": settings.output.schema, "name": settings.output.name}
        if settings.output.description is not None:
            output["description"] = settings.output.description
        payload["output"] = output
    return payload, repairs + ids.repairs()


def _holds_tool_calls(messages: list[dict[str, Any]]) -> bool:
    return any(
        part["type"] == "tool-call"
        for message in messages
        if message["role"] == "assistant"
        for part in message["content"]
    )


def sdk_namespace(provider: str | None) -> str | None:
    """Where the SDK's provider for ``provider`` reads its ``providerOptions``."""
    if provider is None:
        return None
    name = provider.strip().lower()
    return NAMESPACES.get(name, name)


def _assistant(
    parts: list[dict[str, Any]], ids: ToolIdMap, namespace: str | None, gemini_3: bool, repairs: list[Repair]
) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    signed_call = False
    for part in parts:
        part = _unmarked(part, repairs)
        if "providerOptions" in part and namespace is not None:
            part = _keyed(part, namespace)
        if part["type"] == "tool-call":
            part = {**part, "toolCallId": ids(part["toolCallId"])}
            if gemini_3 and not part.get("providerExecuted"):
                signed = "thoughtSignature" in ((part.get("providerOptions") or {}).get(namespace or "") or {})
                if not signed and not signed_call:
                    part = _with_option(part, namespace or "google", "thoughtSignature", SKIP_SIGNATURE)
                    repairs.append(
                        Repair("thought-signature-sentinel", f"ai-sdk: call {part['toolCallId']!r} had no signature")
                    )
                signed_call = True
        elif part["type"] == "tool-result":
            part = _result(part, ids, repairs)
        content.append(part)
    return content


def _user_part(part: dict[str, Any]) -> dict[str, Any]:
    """The part as stored, but an image or file labelled as another type than its bytes are: the SDK sends
    the label, and Anthropic refuses an image whose bytes do not match it."""
    if part["type"] not in ("image", "file"):
        return part
    media = part_media(part)
    label = part.get("mediaType")
    found = typed(media.base64, label) if media.base64 is not None else label
    return part if found == label else {**part, "mediaType": found}


def _keyed(part: dict[str, Any], namespace: str) -> dict[str, Any]:
    """The part with its provider state also under ``namespace`` when the model view kept it under another
    name of the same provider (``google`` state for a Vertex model)."""
    options = part["providerOptions"]
    if namespace in options:
        return part
    family = provider_family(namespace)
    same = [key for key in options if provider_family(key) == family]
    if len(same) != 1:
        return part
    return {**part, "providerOptions": {**options, namespace: options[same[0]]}}


def _with_option(part: dict[str, Any], namespace: str, key: str, value: Any) -> dict[str, Any]:
    options = dict(part.get("providerOptions") or {})
    options[namespace] = {**(options.get(namespace) or {}), key: value}
    return {**part, "providerOptions": options}


def _loop_turn_thinks(messages: list[dict[str, Any]]) -> bool:
    """Whether Claude may think in this request: when it ends in a tool loop, the loop's turn must open with
    Anthropic-signed thinking (Anthropic's own rule for thinking, which the SDK leaves to the caller)."""
    if len(messages) < 2 or messages[-1]["role"] != "tool" or messages[-2]["role"] != "assistant":
        return True
    first = messages[-2]["content"][0]
    anthropic = (first.get("providerOptions") or {}).get("anthropic") or {}
    return first["type"] == "reasoning" and bool(anthropic.get("signature") or anthropic.get("redactedData"))


def _effort_options(effort: Effort, target: ModelRef | None, ceiling: int | None) -> dict[str, Any] | None:
    """The reasoning effort in the options of the SDK's provider: ``reasoningEffort`` for OpenAI, ``thinking``
    for Anthropic (adaptive with an ``effort`` from Claude 4.6 on, else a budget under ``ceiling``, the
    answer's room), ``thinkingConfig`` for Google."""
    model = target.model if target is not None and target.model else ""
    match target.family if target is not None else None:
        case "openai":
            return {"reasoningEffort": effort.as_level()} if reasons(model) else None
        case "anthropic":
            version = claude_version(model)
            if version is not None and version < THINKING_FROM:
                return None
            if effort.off:
                return {"thinking": {"type": "disabled"}}
            if version is not None and version >= ADAPTIVE_FROM:
                return {"thinking": {"type": "adaptive"}, "effort": EFFORT_LEVELS[effort.as_level()]}
            budget = max(effort.as_budget(), MIN_THINKING_BUDGET)
            if ceiling is not None:
                budget = min(budget, max(ceiling - 1, MIN_THINKING_BUDGET))
            return {"thinking": {"type": "enabled", "budgetTokens": budget}}
        case "google":
            config = thinking_config(effort, model)
            return None if config is None else {"thinkingConfig": config}
        case _:
            return None


def _result(part: dict[str, Any], ids: ToolIdMap, repairs: list[Repair]) -> dict[str, Any]:
    output = _output(_unmarked(part["output"], repairs), repairs)
    return {**_unmarked(part, repairs), "toolCallId": ids(part["toolCallId"]), "output": output}


def _unmarked(item: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    """``item`` without a cache mark stored in its ``providerOptions``, said so. The marks are the cache
    policy's to place (``app.providers.caching``), as the ``anthropic`` target sends none it did not place:
    stored ones would pass Anthropic's four (the SDK drops those past the fourth, perhaps the policy's own)
    and, beside 1-hour marks, put 5-minute ones before them, which Anthropic refuses."""
    options = item.get("providerOptions")
    if not isinstance(options, dict):
        return item
    anthropic = options.get("anthropic")
    if not isinstance(anthropic, dict) or not any(key in anthropic for key in CACHE_MARKS):
        return item
    detail = "ai-sdk: a cache mark stored on a part is not sent: the cache policy places them"
    repairs.append(Repair("cache-mark-dropped", detail))
    kept = {key: value for key, value in anthropic.items() if key not in CACHE_MARKS}
    rest = {name: kept if name == "anthropic" else value for name, value in options.items()}
    if not kept:
        del rest["anthropic"]
    if rest:
        return {**item, "providerOptions": rest}
    return {key: value for key, value in item.items() if key != "providerOptions"}


def _output(output: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    match output["type"]:
        case "text" | "error-text" | "json" | "error-json":
            return _known(output, ("type", "value", "providerOptions"))
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


def _known(output: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The output with the keys the SDK defines only (a stored output may hold keys a newer SDK added)."""
    if all(key in keys for key in output):
        return output
    return {key: output[key] for key in keys if key in output}


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    definition: dict[str, Any] = {"inputSchema": tool.input_schema}
    if tool.description:
        definition["description"] = tool.description
    return definition
