"""AI SDK ``ModelMessage[]`` (a ``generateText``/``streamText`` call's ``messages``, with its ``system``) as
one session: already the shape the service stores, so parts pass through with their known keys.

Names older SDKs wrote are read as today's: ``mimeType`` as ``mediaType``, a tool call's ``args`` as
``input``, a result's ``result`` (with ``isError``) as ``output``, ``redacted-reasoning`` as reasoning
holding Anthropic's redacted data, ``providerMetadata`` as ``providerOptions``. A key a known part does not
declare (a newer SDK's) is kept, as the append schema keeps it; a part of an unknown type is left out and
reported. A ``UIMessage`` (``parts`` and no ``content``, what ``useChat`` keeps) is read as
``convertToModelMessages`` sends it (``ui_messages``). A message's own string ``id`` (stores often keep one)
is its id; otherwise the id is positional (``request_body``). The call's ``system`` is text, a
``SystemModelMessage`` or a list of them (AI SDK 5 on); their texts make the one system message, in order.
"""

from typing import Any

from app.engine.kinds import ROLES
from app.engine.parts import AssistantPart, ToolPart, UserPart, part_models, part_type
from app.importers.imported import ImportedMessage, ImportResult, Repair, Skipped
from app.importers.options import ImportOptions
from app.importers.request_body import RequestImport, message_id
from app.importers.ui_messages import is_ui_message, model_messages
from app.importers.unexpected import reading_line

FORMAT = "ai-sdk"
PART_TYPES: frozenset[str] = frozenset(
    part_type(model) for union in (UserPart, AssistantPart, ToolPart) for model in part_models(union)
)
"""The part types the append schema holds."""


def parse(data: bytes, options: ImportOptions) -> ImportResult:
    reading = RequestImport.start(FORMAT, data, options, system_text)
    messages, report = reading.messages, reading.report
    for number, raw in enumerate(reading.body.messages, start=1):
        with reading_line(report, number):
            role = raw.get("role") if isinstance(raw, dict) else None
            if role not in ROLES or not isinstance(raw, dict):
                report.invalid.append(Skipped(number, f"not a ModelMessage (role {role!r})"))
                continue
            own_id = raw.get("id")
            mid = own_id if isinstance(own_id, str) and own_id else message_id(number)
            notes: list[str] = []
            if is_ui_message(raw) and role != "tool":
                messages.extend(model_messages(mid, role, raw["parts"], notes))
                report.repairs.extend(Repair(number, mid, note) for note in notes)
                continue
            content = raw.get("content")
            if not isinstance(content, str | list):
                report.invalid.append(Skipped(number, "content is neither text nor a list of parts"))
                continue
            if isinstance(content, list):
                content = [part for item in content if (part := _part(item, notes)) is not None]
            if raw.get("providerOptions"):
                notes.append("the message's providerOptions left out (the append schema holds them on parts only)")
            messages.append(ImportedMessage(mid, role, content, {}, None))
            report.repairs.extend(Repair(number, mid, note) for note in notes)
    return reading.finish(reading.body.model)


def system_text(system: Any) -> str:
    """The text of a call's ``system``: a string, a ``{role: "system", content}`` message, or a list of them."""
    if isinstance(system, str):
        return system
    if isinstance(system, dict):
        content = system.get("content")
        return content if system.get("role") == "system" and isinstance(content, str) else ""
    if isinstance(system, list):
        return "\n\n".join(text for one in system if (text := system_text(one)))
    return ""


def _part(item: Any, notes: list[str]) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        notes.append("a part that is not an object left out")
        return None
    part = dict(item)
    if "providerMetadata" in part:
        part.setdefault("providerOptions", part.pop("providerMetadata"))
    if "mimeType" in part:
        part.setdefault("mediaType", part.pop("mimeType"))
    match part.get("type"):
        case "redacted-reasoning":
            options = {"anthropic": {"redactedData": part.pop("data", None)}}
            part.update(type="reasoning", text="", providerOptions=options)
        case "tool-call" if "args" in part:
            part.setdefault("input", part.pop("args"))
        case "tool-result" if "output" not in part:
            result, failed = part.pop("result", None), part.pop("isError", False) is True
            if isinstance(result, str):
                part["output"] = {"type": "error-text" if failed else "text", "value": result}
            else:
                part["output"] = {"type": "error-json" if failed else "json", "value": result}
    if not isinstance(part.get("type"), str) or part["type"] not in PART_TYPES:
        notes.append(f"part of type {part.get('type')!r} left out (no part holds it)")
        return None
    return part
