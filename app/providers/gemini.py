"""The ``gemini`` target: a Gemini ``generateContent`` request body (REST, camelCase).

Rules applied: system text in ``systemInstruction`` (later notes as
wrapped user text); ``user``/``model`` turns merged so they alternate, starting on ``user``; a function-call
turn followed by one user turn with exactly one ``functionResponse`` per call (``response`` an object), media
from results after them; every part holds one data field and no ``parts`` list is empty; thought parts and
``thoughtSignature`` replayed only when Google signed them, a Gemini 3 call without one gets the documented
``skip_thought_signature_validator`` sentinel; code Gemini ran itself as ``executableCode`` and
``codeExecutionResult`` parts, any other tool it ran left out with its result, said so. A reasoning effort is
``generationConfig.thinkingConfig`` (a level from Gemini 3 on, a budget before), a structured answer
``responseMimeType`` ``application/json`` with the schema as ``responseSchema`` (Gemini's OpenAPI subset of JSON
Schema: what it lacks is left out, said so). A ``cachedContent`` the request names holds its own system
instruction and tools, which Gemini then refuses in the request: they are left out, said so. The model is not
in the body: Gemini takes it in the URL.
"""

import re
from typing import Any

from app.projections.types import Repair
from app.providers.conversation import START, Settled, unsettled, wrap_system_note
from app.providers.media import Media, part_media, unreadable
from app.providers.request_settings import NO_SETTINGS, Effort, OutputFormat, RequestSettings
from app.providers.tool_definitions import ToolDefinition
from app.providers.tool_ids import ToolIdMap
from app.providers.tool_output import read_output

MAX_CALL_ID = 64
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented last resort for a Gemini 3 function call replayed without its signature."""
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
INLINE_PREFIXES = ("audio/", "video/", "text/")
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
"""The images Gemini reads; any other (GIF, SVG, BMP) is named in text, as for the other targets."""
MAX_THINKING_BUDGET = 24_576
"""Gemini 2.5 Flash's largest thinking budget (Pro's is 32,768; the smaller fits both)."""
MIN_PRO_BUDGET = 128
INLINE_TYPES = IMAGE_TYPES | {"application/pdf"}


def to_gemini(
    settled: Settled,
    *,
    model: str,
    tools: tuple[ToolDefinition, ...],
    max_output_tokens: int | None,
    settings: RequestSettings = NO_SETTINGS,
) -> tuple[dict[str, Any], list[Repair]]:
    repairs: list[Repair] = []
    ids = ToolIdMap(MAX_CALL_ID, "gemini")
    needs_signature = is_gemini_3(model)
    contents: list[dict[str, Any]] = []
    for message in settled.messages:
        match message["role"]:
            case "system":
                repairs.append(Repair("system-note-as-user", "gemini: a later system note sent as wrapped user text"))
                _add(contents, "user", [{"text": wrap_system_note(message["content"])}], repairs)
            case "user":
                _add(contents, "user", [_user_part(part, repairs) for part in message["content"]], repairs)
            case "assistant":
                parts = _model_parts(message["content"], ids, needs_signature, repairs)
                if parts:
                    _add(contents, "model", parts, repairs)
                else:
                    repairs.append(Repair("empty-message", "gemini: dropped a model turn with nothing it can carry"))
            case "tool":
                responses: list[dict[str, Any]] = []
                media: list[dict[str, Any]] = []
                for part in message["content"]:
                    response, attached = _function_response(part, ids, repairs)
                    responses.append(response)
                    media += attached
                _add(contents, "user", responses + media, repairs)
            case other:
                unsettled("gemini", f"a {other!r} message")
    if contents and contents[0]["role"] != "user" and settled.opens_conversation:
        contents.insert(0, {"role": "user", "parts": [{"text": START}]})
        # Listed first, where the turn goes: what follows is listed message by message.
        repairs.insert(0, Repair("starts-on-model", f"gemini: added a user turn {START!r} before the first model turn"))
    payload: dict[str, Any] = {"contents": contents}
    if settings.cached_content is not None:
        payload["cachedContent"] = settings.cached_content
        repairs += _left_to_cached_content(settled.system, tools)
    else:
        if settled.system:
            payload["systemInstruction"] = {"parts": [{"text": settled.system}]}
        if tools:
            payload["tools"] = [{"functionDeclarations": [_declaration(tool) for tool in tools]}]
    config: dict[str, Any] = {}
    if max_output_tokens is not None:
        config["maxOutputTokens"] = max_output_tokens
    if settings.effort is not None:
        thinking = thinking_config(settings.effort, model.removeprefix("models/"))
        if thinking is None:
            repairs.append(Repair("effort-unsupported", f"gemini: {model} takes no thinking settings"))
        else:
            config["thinkingConfig"] = thinking
    if settings.output is not None:
        config.update(_response_format(settings.output, repairs))
    if config:
        payload["generationConfig"] = config
    return payload, repairs + ids.repairs()


def _left_to_cached_content(system: str | None, tools: tuple[ToolDefinition, ...]) -> list[Repair]:
    """Gemini refuses a system instruction or tools beside ``cachedContent``: the cached content holds the ones
    it was created with. Those a run or the history brought are left out, said so (a request that asks for
    them itself is refused before: ``app.providers.caching.check_cached_content``)."""
    left = [name for name, given in (("the system instruction", system), ("tools", tools)) if given]
    if not left:
        return []
    detail = f"gemini: {' and '.join(left)} left out: the cached content holds its own"
    return [Repair("left-to-cached-content", detail)]


def is_gemini_3(model: str) -> bool:
    return model.removeprefix("models/").startswith("gemini-3")


def thinking_config(effort: Effort, model: str) -> dict[str, Any] | None:
    """Gemini's ``thinkingConfig`` for ``effort`` (the AI SDK's ``google`` options take the same object): a
    ``thinkingLevel`` from Gemini 3 on (Pro thinks at low or high, Flash also at minimal and medium), a
    ``thinkingBudget`` on 2.5 (Pro cannot turn thinking off: its least is 128 tokens). ``None`` for a model that
    does not think."""
    if model.startswith("gemini-3"):
        level = effort.as_level()
        if "flash" in model:
            chosen = {"none": "minimal", "xhigh": "high", "max": "high"}.get(level, level)
        else:
            chosen = "low" if level in ("none", "minimal", "low") else "high"
        return {"thinkingLevel": chosen, "includeThoughts": True}
    if model.startswith("gemini-2.5"):
        budget = min(effort.as_budget(), MAX_THINKING_BUDGET)
        if "pro" in model:
            budget = max(budget, MIN_PRO_BUDGET)
        return {"thinkingBudget": budget, "includeThoughts": budget > 0}
    return None


def _response_format(output: OutputFormat, repairs: list[Repair]) -> dict[str, Any]:
    dropped: list[str] = []
    schema = _schema(output.schema, "", dropped)
    if dropped:
        repairs.append(Repair("schema-keys-dropped", f"gemini: responseSchema takes no {', '.join(dropped)}"))
    if not schema.get("properties") and schema.get("type") == "object":
        repairs.append(Repair("schema-empty-object", "gemini: an object schema without properties: JSON mode only"))
        return {"responseMimeType": "application/json"}
    return {"responseMimeType": "application/json", "responseSchema": schema}


def _schema(given: dict[str, Any], where: str, dropped: list[str]) -> dict[str, Any]:
    """A JSON Schema as Gemini's ``Schema``: the keywords it shares kept, nested schemas converted, a type list
    with ``null`` as ``nullable``, ``oneOf`` as ``anyOf``, a string ``const`` as a one-value ``enum``; every other
    keyword left out and named in ``dropped`` (with its path)."""
    schema: dict[str, Any] = {}
    for key, value in given.items():
        path = f"{where}.{key}" if where else key
        if key == "type" and isinstance(value, list):
            kinds = [kind for kind in value if kind != "null"]
            if len(kinds) == 1:
                schema["type"] = kinds[0]
                schema["nullable"] = len(kinds) != len(value) or None
            else:
                dropped.append(path)
        elif key in _SCHEMA_KEYWORDS:
            schema[key] = value
        elif key == "properties" and isinstance(value, dict):
            schema[key] = {name: _schema(sub, f"{path}.{name}", dropped) for name, sub in value.items()}
        elif key == "items" and isinstance(value, dict):
            schema[key] = _schema(value, path, dropped)
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            schema["anyOf"] = [_schema(sub, f"{path}[{n}]", dropped) for n, sub in enumerate(value)]
        elif key == "const" and isinstance(value, str):
            schema["enum"] = [value]
        elif key == "enum" and isinstance(value, list) and all(isinstance(item, str) for item in value):
            schema[key] = value
        else:
            dropped.append(path)
    return {key: value for key, value in schema.items() if value is not None}


_SCHEMA_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "required",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "default",
        "example",
        "propertyOrdering",
    }
)
"""JSON Schema keywords Gemini's ``Schema`` takes as they are."""


def _add(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]], repairs: list[Repair]) -> None:
    if contents and contents[-1]["role"] == role:
        # Parts after function responses in one user turn is Gemini's own shape, not a repair worth reporting.
        if "functionResponse" not in contents[-1]["parts"][0]:
            repairs.append(Repair("merged-turns", f"gemini: merged consecutive {role} turns"))
        contents[-1]["parts"].extend(parts)
    else:
        contents.append({"role": role, "parts": list(parts)})


def _model_parts(
    parts: list[Any], ids: ToolIdMap, needs_signature: bool, repairs: list[Repair]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    first_call = True
    executed = _executed_code(parts, repairs)
    for part in parts:
        if part.get("providerExecuted") or part["type"] == "tool-result":
            out += executed.get((part["type"], part["toolCallId"]), [])
            continue
        signature = ((part.get("providerOptions") or {}).get("google") or {}).get("thoughtSignature")
        if signature is not None and not is_base64(signature):
            repairs.append(
                Repair("thought-signature-invalid", "gemini: a thought signature that is not base64 is not sent")
            )
            signature = None
        match part["type"]:
            case "text":
                out.append({"text": part["text"], **({"thoughtSignature": signature} if signature else {})})
            case "reasoning":
                if signature is None or not part["text"].strip():
                    repairs.append(
                        Repair(
                            "reasoning-dropped", "gemini: reasoning without a Google thought signature is not replayed"
                        )
                    )
                    continue
                out.append({"text": part["text"], "thought": True, "thoughtSignature": signature})
            case "file":
                out.append(_media_part(part_media(part), repairs))
            case "tool-call":
                call: dict[str, Any] = {
                    "functionCall": {"name": part["toolName"], "args": part["input"], "id": ids(part["toolCallId"])}
                }
                if signature:
                    call["thoughtSignature"] = signature
                elif needs_signature and first_call:
                    call["thoughtSignature"] = SKIP_SIGNATURE
                    repairs.append(
                        Repair(
                            "thought-signature-sentinel",
                            f"gemini: call {part['toolCallId']!r} had no thought signature",
                        )
                    )
                first_call = False
                out.append(call)
            case other:
                unsettled("gemini", f"an assistant {other!r} part")
    return out


def _executed_code(parts: list[Any], repairs: list[Repair]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Code Gemini ran, by (part type, call id): the call as ``executableCode``, its result as
    ``codeExecutionResult``, in their places. Any other tool the provider ran has no part here: left out."""
    calls = {p["toolCallId"]: p for p in parts if p["type"] == "tool-call" and p.get("providerExecuted")}
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for result in (p for p in parts if p["type"] == "tool-result"):
        call = calls[result["toolCallId"]]
        code = call["input"].get("code")
        value = result["output"].get("value")
        if call["toolName"] != "code_execution" or not isinstance(code, str) or not isinstance(value, dict):
            repairs.append(
                Repair("provider-tool-dropped", f"gemini: {call['toolName']} ran by a provider has no Gemini part")
            )
            continue
        language = call["input"].get("language") or "PYTHON"
        outcome = value.get("outcome") or "OUTCOME_OK"
        found[("tool-call", call["toolCallId"])] = [{"executableCode": {"language": language, "code": code}}]
        ran: dict[str, Any] = {"outcome": outcome}
        if isinstance(value.get("output"), str):
            ran["output"] = value["output"]
        found[("tool-result", call["toolCallId"])] = [{"codeExecutionResult": ran}]
    return found


def is_base64(value: object) -> bool:
    """Gemini's JSON carries signatures as bytes in base64 (either alphabet); anything else is refused."""
    return isinstance(value, str) and bool(_BASE64.match(value)) and len(value.rstrip("=")) % 4 != 1


def _user_part(part: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    match part["type"]:
        case "text":
            return {"text": part["text"]}
        case "image" | "file":
            return _media_part(part_media(part), repairs)
        case other:
            unsettled("gemini", f"a user {other!r} part")


def _media_part(media: Media, repairs: list[Repair]) -> dict[str, Any]:
    if not (media.media_type.startswith(INLINE_PREFIXES) or media.media_type in INLINE_TYPES):
        repairs.append(Repair("media-as-text", f"gemini: cannot send {media.describe()}; said so in text"))
        return {"text": unreadable(media)}
    if media.url is not None:
        return {"fileData": {"mimeType": media.media_type, "fileUri": media.url}}
    return {"inlineData": {"mimeType": media.media_type, "data": media.base64}}


def _function_response(
    part: dict[str, Any], ids: ToolIdMap, repairs: list[Repair]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    output = read_output(part["output"])
    key = "error" if output.is_error else "output"
    response = {"name": part["toolName"], "id": ids(part["toolCallId"]), "response": {key: output.text}}
    media = [] if output.is_error else [_media_part(item, repairs) for item in output.media]
    if media:
        repairs.append(Repair("media-moved", "gemini: tool result media sent as parts after the function responses"))
    return {"functionResponse": response}, media


def _declaration(tool: ToolDefinition) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name, "parametersJsonSchema": tool.input_schema}
    if tool.description:
        declaration["description"] = tool.description
    return declaration
