"""AI SDK ``UIMessage`` (``{id, role, parts}``, what ``useChat`` keeps and most AI SDK apps store) as the
ModelMessages ``convertToModelMessages`` makes of it, so a store of chat UI histories imports as the
conversations their model saw.

- ``text``, ``reasoning`` and ``file`` parts become the same parts (``providerMetadata`` as
  ``providerOptions``, a file's ``url`` as its data); a system message is the text of its text parts.
- An assistant message is cut into steps at each ``step-start``: each step is an assistant message of its
  parts and tool calls (the first keeps the message's id, step ``n`` is ``<id>:step-<n>``), followed by a
  tool message (``<step id>:results``) of the results its tools have.
- A tool part (``tool-<name>``, ``dynamic-tool``) is a call once its input is complete; ``output-available``
  is its result, ``output-error`` an error result, ``output-denied`` a denied execution; an approval asked
  or answered is a ``tool-approval-request`` / ``tool-approval-response``. A tool the provider ran keeps its
  result in the assistant message, beside the call.
- ``source-url``, ``source-document`` and ``data-*`` parts are for the UI: the model never sees them, so
  they are left out and reported; ``step-start`` only marks a step.
"""

from dataclasses import dataclass, field
from typing import Any

from app.engine.kinds import Role
from app.importers.imported import ImportedMessage
from app.importers.untyped import as_object

UI_ONLY_PARTS = ("source-url", "source-document")
CALL_STATES = (
    "input-available",
    "approval-requested",
    "approval-responded",
    "output-available",
    "output-error",
    "output-denied",
)
"""Tool states whose input is complete: the model made the call (``input-streaming`` is still being written)."""


def is_ui_message(raw: dict[str, Any]) -> bool:
    return isinstance(raw.get("parts"), list) and "content" not in raw


def model_messages(message_id: str, role: Role, parts: list[Any], notes: list[str]) -> list[ImportedMessage]:
    """The messages one UIMessage becomes; ``notes`` says what was left out."""
    objects = [part for part in parts if isinstance(part, dict)]
    if len(objects) < len(parts):
        notes.append("a part that is not an object left out")
    if role == "system":
        text = "".join(str(part.get("text", "")) for part in objects if part.get("type") == "text")
        return [ImportedMessage(message_id, "system", text, {}, None)]
    if role == "user":
        content = [converted for part in objects if (converted := _content_part(part, notes)) is not None]
        return [ImportedMessage(message_id, "user", content, {}, None)]
    messages: list[ImportedMessage] = []
    for number, step in enumerate(_steps(objects), start=1):
        step_id = message_id if number == 1 else f"{message_id}:step-{number}"
        made = _Step()
        for part in step:
            made.add(part, notes)
        if made.content or number == 1:
            messages.append(ImportedMessage(step_id, "assistant", made.content, {}, None))
        if made.results:
            messages.append(ImportedMessage(f"{step_id}:results", "tool", made.results, {}, None))
    return messages


def _steps(parts: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    steps: list[list[dict[str, Any]]] = [[]]
    for part in parts:
        if part.get("type") == "step-start":
            if steps[-1]:
                steps.append([])
        else:
            steps[-1].append(part)
    return steps


@dataclass(slots=True)
class _Step:
    content: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)

    def add(self, part: dict[str, Any], notes: list[str]) -> None:
        kind = part.get("type")
        if isinstance(kind, str) and (kind == "dynamic-tool" or kind.startswith("tool-")):
            self._tool(part, kind)
            return
        converted = _content_part(part, notes)
        if converted is not None:
            self.content.append(converted)

    def _tool(self, part: dict[str, Any], kind: str) -> None:
        state = part.get("state")
        if state not in CALL_STATES:
            return
        call_id = str(part.get("toolCallId", ""))
        name = str(part.get("toolName", "")) if kind == "dynamic-tool" else kind.removeprefix("tool-")
        call: dict[str, Any] = {"type": "tool-call", "toolCallId": call_id, "toolName": name}
        call["input"] = part.get("rawInput") if state == "output-error" and "input" not in part else part.get("input")
        provider_executed = part.get("providerExecuted") is True
        if provider_executed:
            call["providerExecuted"] = True
        if isinstance(part.get("callProviderMetadata"), dict):
            call["providerOptions"] = part["callProviderMetadata"]
        self.content.append(call)
        approval = as_object(part.get("approval"))
        if isinstance(approval.get("id"), str):
            request = {"type": "tool-approval-request", "approvalId": approval["id"], "toolCallId": call_id}
            self.content.append(request)
            if isinstance(approval.get("approved"), bool):
                response = {"type": "tool-approval-response", "approvalId": approval["id"]}
                response["approved"] = approval["approved"]
                if isinstance(approval.get("reason"), str):
                    response["reason"] = approval["reason"]
                self.results.append(response)
        output = _output(part, state, approval)
        if output is None:
            return
        result = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": output}
        if provider_executed:
            self.content.append({**result, "providerExecuted": True})
        else:
            self.results.append(result)


def _output(part: dict[str, Any], state: Any, approval: dict[str, Any]) -> dict[str, Any] | None:
    match state:
        case "output-available":
            value = part.get("output")
            return {"type": "text", "value": value} if isinstance(value, str) else {"type": "json", "value": value}
        case "output-error":
            return {"type": "error-text", "value": str(part.get("errorText", ""))}
        case "output-denied":
            reason = approval.get("reason")
            return {"type": "execution-denied", **({"reason": reason} if isinstance(reason, str) else {})}
    return None


def _content_part(part: dict[str, Any], notes: list[str]) -> dict[str, Any] | None:
    kind = part.get("type")
    converted: dict[str, Any]
    match kind:
        case "text" | "reasoning":
            converted = {"type": kind, "text": str(part.get("text", ""))}
        case "file":
            converted = {"type": "file", "data": str(part.get("url", "")), "mediaType": str(part.get("mediaType", ""))}
            if isinstance(part.get("filename"), str):
                converted["filename"] = part["filename"]
        case "step-start":
            return None
        case str() if kind in UI_ONLY_PARTS or kind.startswith("data-"):
            notes.append(f"{kind} part left out (shown in the UI, never sent to the model)")
            return None
        case _:
            notes.append(f"part of type {kind!r} left out (no part holds it)")
            return None
    if isinstance(part.get("providerMetadata"), dict):
        converted["providerOptions"] = part["providerMetadata"]
    return converted
