"""An OpenAI Chat Completions request's ``messages`` (or the request body) as one session of messages.

``system`` and ``developer`` messages become system messages; a user's ``image_url``, ``input_audio`` and
``file`` parts become image and file parts; an assistant's ``tool_calls`` become tool-call parts (their JSON
``arguments`` parsed; a custom tool's free-form ``input`` kept as the string it is), ``reasoning_content``
(DeepSeek, vLLM) a reasoning part and ``refusal`` text; each ``tool`` message a tool message answering its
call. The legacy ``function_call`` and ``function`` role are read as a tool call and its result. Message ids
are positional (``request_body``).
"""

import json
from typing import Any

from app.importers.imported import ImportedMessage, ImportResult, Repair, Skipped
from app.importers.options import ImportOptions
from app.importers.request_body import RequestImport, message_id
from app.importers.unexpected import reading_line
from app.importers.untyped import as_list, as_object

FORMAT = "openai-chat"
PROVIDER = "openai"


def parse(data: bytes, options: ImportOptions) -> ImportResult:
    reading = RequestImport.start(FORMAT, data, options)
    messages, report = reading.messages, reading.report
    tool_names: dict[str, str] = {}
    last_function_call: str | None = None
    for number, raw in enumerate(reading.body.messages, start=1):
        with reading_line(report, number):
            role = raw.get("role") if isinstance(raw, dict) else None
            mid = message_id(number)
            notes: list[str] = []
            metadata = {"name": raw["name"]} if isinstance(raw, dict) and isinstance(raw.get("name"), str) else {}
            match role:
                case "system" | "developer":
                    messages.append(ImportedMessage(mid, "system", _text(raw.get("content")), metadata, None))
                case "user":
                    messages.append(
                        ImportedMessage(mid, "user", _user_content(raw.get("content"), notes), metadata, None)
                    )
                case "assistant":
                    parts = _assistant_parts(mid, raw, tool_names, notes)
                    if isinstance(raw.get("function_call"), dict):
                        last_function_call = _function_call_id(mid)
                    messages.append(ImportedMessage(mid, "assistant", parts, metadata, None))
                case "tool" | "function":
                    call_id = raw.get("tool_call_id") if role == "tool" else last_function_call
                    call_id = str(call_id or "")
                    name = tool_names.get(call_id) or str(raw.get("name") or "unknown")
                    output = {"type": "text", "value": _text(raw.get("content"))}
                    result = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": output}
                    messages.append(ImportedMessage(mid, "tool", [result], {}, None))
                case _:
                    report.invalid.append(Skipped(number, f"not a chat message (role {role!r})"))
            report.repairs.extend(Repair(number, mid, note) for note in notes)
    return reading.finish(f"{PROVIDER}/{reading.body.model}" if reading.body.model else None)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _user_content(content: Any, notes: list[str]) -> str | list[dict[str, Any]]:
    if isinstance(content, str) or not isinstance(content, list):
        return content if isinstance(content, str) else ""
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        match kind:
            case "text":
                parts.append({"type": "text", "text": str(part.get("text", ""))})
            case "image_url":
                image_url = part.get("image_url")
                url = str(image_url if isinstance(image_url, str) else as_object(image_url).get("url", ""))
                image: dict[str, Any] = {"type": "image", "image": url}
                media_type = _data_url_media_type(url)
                if media_type is not None:
                    image["mediaType"] = media_type
                parts.append(image)
            case "input_audio":
                audio = as_object(part.get("input_audio"))
                if not isinstance(audio.get("data"), str):
                    notes.append("input_audio without its data left out")
                    continue
                media_type = f"audio/{audio.get('format', 'wav')}"
                parts.append({"type": "file", "data": str(audio.get("data", "")), "mediaType": media_type})
            case "file":
                file = as_object(part.get("file"))
                data = file.get("file_data")
                if not isinstance(data, str):
                    notes.append("file given only by its OpenAI file id left out (no part holds it)")
                    continue
                file_part = {"type": "file", "data": data, "mediaType": _data_url_media_type(data) or "application/pdf"}
                if isinstance(file.get("filename"), str):
                    file_part["filename"] = file["filename"]
                parts.append(file_part)
            case _:
                notes.append(f"user part of type {kind!r} left out (no part holds it)")
    return parts


def _assistant_parts(
    mid: str, raw: dict[str, Any], tool_names: dict[str, str], notes: list[str]
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    reasoning = raw.get("reasoning_content") or raw.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append({"type": "reasoning", "text": reasoning})
    content = raw.get("content")
    if isinstance(content, str) and content:
        parts.append({"type": "text", "text": content})
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") in ("text", "refusal"):
            parts.append({"type": "text", "text": str(part.get("text") or part.get("refusal") or "")})
    if isinstance(raw.get("refusal"), str) and raw["refusal"]:
        parts.append({"type": "text", "text": raw["refusal"]})
    calls = [c for c in as_list(raw.get("tool_calls")) if isinstance(c, dict)]
    if isinstance(raw.get("function_call"), dict):
        calls.append({"id": _function_call_id(mid), "function": raw["function_call"]})
    for call in calls:
        call_id = str(call.get("id", ""))
        if call.get("type") == "custom":
            custom = as_object(call.get("custom"))
            name, tool_input = str(custom.get("name", "")), custom.get("input", "")
        else:
            function = as_object(call.get("function"))
            name, tool_input = str(function.get("name", "")), _input(function, notes)
        tool_names[call_id] = name
        parts.append({"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": tool_input})
    return parts


def _function_call_id(mid: str) -> str:
    """The legacy ``function_call`` has no id: its result (the next ``function`` message) names it by this."""
    return f"{mid}:function_call"


def _input(function: dict[str, Any], notes: list[str]) -> Any:
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        return arguments if arguments is not None else {}
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        notes.append(f"arguments of {function.get('name')!r} are not JSON: kept as the string")
        return arguments


def _data_url_media_type(url: str) -> str | None:
    if not url.startswith("data:") or ";" not in url:
        return None
    return url[len("data:") : url.index(";")] or None
