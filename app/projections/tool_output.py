"""What the model sees of a tool result: the stub, the soft-limit cut, the empty-output note.

Applied to every tool-result part of a message, never only to the first (the others would be lost). The
part keeps its ``toolCallId``, ``toolName`` and any other keys, so pairing with the call is never broken:
only ``output`` changes. Never decides whether a result is sent; that is the view's.
"""

from dataclasses import dataclass, field
from typing import Any

from app import lossless_json
from app.projections.media import RESULT_MEDIA_ITEMS, MediaStyle, readable_items

CLEARED = "[Old tool result content cleared]"
OMITTED = "[Tool result omitted from this context]"
NO_OUTPUT = "(no output)"


@dataclass(slots=True)
class ResultChange:
    part: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class ResultPolicy:
    compacted: bool
    include: bool
    soft_limit: int
    """Characters of output kept; 0 or less keeps everything."""
    message_id: str
    readable: tuple[str, ...] | None
    media_style: MediaStyle


def result_for_model(part: dict[str, Any], policy: ResultPolicy) -> ResultChange:
    if policy.compacted:
        return ResultChange(_with_output(part, "text", CLEARED), ["tool result compacted for model context"], True)
    if not policy.include:
        return ResultChange(_with_output(part, "text", OMITTED), ["tool result omitted (includeToolResults off)"], True)
    output = part.get("output")
    if not isinstance(output, dict):
        return ResultChange(part)
    kind = output.get("type")
    value = output.get("value")
    error = kind in {"error-text", "error-json"}
    text_type = "error-text" if error else "text"
    match kind:
        case "text" | "error-text":
            text = value if isinstance(value, str) else ""
            if not text.strip():
                return ResultChange(
                    _with_output(part, text_type, NO_OUTPUT), ["empty tool result noted as (no output)"]
                )
            return _cut_text(part, text_type, text, policy)
        case "json" | "error-json":
            if value is None or value == "":
                return ResultChange(
                    _with_output(part, text_type, NO_OUTPUT), ["empty tool result noted as (no output)"]
                )
            serialized = lossless_json.dumps(value).decode()
            if policy.soft_limit > 0 and len(serialized) > policy.soft_limit:
                return _cut_text(part, text_type, serialized, policy)
            return ResultChange(part)
        case "content":
            return _content(part, value if isinstance(value, list) else [], policy)
        case _:
            return ResultChange(part)


def cut(text: str, limit: int) -> tuple[str, int]:
    """The first ``limit`` characters and how many were left out (0 when nothing was)."""
    if limit <= 0 or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def truncation_marker(omitted: int, total: int, message_id: str) -> str:
    return (
        f"[Tool result truncated: {omitted} of {total} characters left out. The full result is kept in "
        f"message {message_id}; re-run the tool or read it in parts if you need the rest.]"
    )


def _cut_text(part: dict[str, Any], text_type: str, text: str, policy: ResultPolicy) -> ResultChange:
    kept, omitted = cut(text, policy.soft_limit)
    if not omitted:
        return ResultChange(part)
    value = f"{kept}\n\n{truncation_marker(omitted, len(text), policy.message_id)}"
    return ResultChange(
        _with_output(part, text_type, value),
        [f"tool result truncated to {policy.soft_limit} characters ({omitted} left out)"],
        True,
    )


def _content(part: dict[str, Any], items: list[Any], policy: ResultPolicy) -> ResultChange:
    items, notes = readable_items(items, policy.readable, policy.media_style)
    texts = [i.get("text", "") for i in items if isinstance(i, dict) and i.get("type") == "text"]
    has_media = any(isinstance(i, dict) and i.get("type") in RESULT_MEDIA_ITEMS for i in items)
    if not has_media and not any(isinstance(t, str) and t.strip() for t in texts):
        return ResultChange(_with_output(part, "text", NO_OUTPUT), [*notes, "empty tool result noted as (no output)"])
    total = sum(len(t) for t in texts if isinstance(t, str))
    budget = policy.soft_limit
    if budget <= 0 or total <= budget:
        changed = {**part, "output": {**part["output"], "value": items}} if notes else part
        return ResultChange(changed, notes)
    kept: list[Any] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            text = item["text"][: max(budget, 0)]
            budget -= len(text)
            if text:
                kept.append({**item, "text": text})
        else:
            kept.append(item)
    omitted = total - policy.soft_limit
    kept.append({"type": "text", "text": truncation_marker(omitted, total, policy.message_id)})
    notes.append(f"tool result truncated to {policy.soft_limit} characters ({omitted} left out)")
    return ResultChange({**part, "output": {**part["output"], "value": kept}}, notes, True)


def _with_output(part: dict[str, Any], output_type: str, value: str) -> dict[str, Any]:
    return {**part, "output": {"type": output_type, "value": value}}
