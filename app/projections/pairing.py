"""Keeping tool calls and their results together in a view (agents.md checklist 5, 15-17).

Two passes over projected messages. ``drop_unanswerable_results`` removes result parts whose call is not
earlier in the view (cut off by the compaction window, dropped with its assistant message, or never made):
a result without its call is a 400 at every provider. ``keep_results_next_to_calls`` moves anything that sits
between a call and its results (a reminder, a bash run, a queued user message) to just after those results,
so no view ever separates them. Both report every change; neither invents a result (a call left without one
is the provider adapter's to settle, per target).
"""

from collections import deque
from dataclasses import replace
from typing import Any

from app.projections.types import Diagnostics, ProjectedMessage, Repair


def call_ids(message: ProjectedMessage) -> list[str]:
    return _ids(message, "tool-call") if message.role == "assistant" else []


def result_ids(message: ProjectedMessage) -> list[str]:
    return _ids(message, "tool-result") if message.role == "tool" else []


def drop_unanswerable_results(messages: list[ProjectedMessage], diagnostics: Diagnostics) -> list[ProjectedMessage]:
    seen: set[str] = set()
    out: list[ProjectedMessage] = []
    for message in messages:
        seen.update(call_ids(message))
        if message.role != "tool" or isinstance(message.content, str):
            out.append(message)
            continue
        kept = [p for p in message.content if p.get("type") != "tool-result" or p.get("toolCallId") in seen]
        if len(kept) == len(message.content):
            out.append(message)
            continue
        dropped = sorted({str(p.get("toolCallId")) for p in message.content if p.get("type") == "tool-result"} - seen)
        reason = f"tool result for {', '.join(dropped)} dropped: its call is not in this view"
        diagnostics.repairs.append(Repair("result-without-call", reason, message.source_message_ids))
        for source in message.source_message_ids:
            diagnostics.reasons.setdefault(source, []).append(reason)
        if kept:
            notes = (*message.metadata.notes, reason)
            out.append(replace(message, content=kept, metadata=replace(message.metadata, notes=notes)))
        else:
            diagnostics.hidden_message_ids.extend(message.source_message_ids)
            hidden = set(message.source_message_ids)
            diagnostics.truncated_message_ids[:] = [i for i in diagnostics.truncated_message_ids if i not in hidden]
    return out


def keep_results_next_to_calls(messages: list[ProjectedMessage], diagnostics: Diagnostics) -> list[ProjectedMessage]:
    queue = deque(messages)
    out: list[ProjectedMessage] = []
    held: list[ProjectedMessage] = []
    pending: set[str] = set()
    waiting_for: list[str] = []
    while queue:
        message = queue.popleft()
        if pending and message.role != "tool":
            held.append(message)
            continue
        out.append(message)
        if message.role == "assistant":
            pending = _answered_ahead(call_ids(message), queue)
            waiting_for = sorted(pending)
        elif message.role == "tool":
            pending.difference_update(result_ids(message))
        if held and not pending:
            moved = tuple(source for m in held for source in m.source_message_ids)
            detail = f"moved {', '.join(moved)} after the results of {', '.join(waiting_for)}"
            diagnostics.repairs.append(Repair("results-follow-calls", detail, moved))
            for source in moved:
                diagnostics.reasons.setdefault(source, []).append(detail)
            queue.extendleft(reversed(held))
            held = []
    return out + held


def _answered_ahead(calls: list[str], queue: deque[ProjectedMessage]) -> set[str]:
    """The calls whose result comes later, before any later call reuses the same id."""
    open_calls = set(calls)
    answered: set[str] = set()
    for message in queue:
        if not open_calls:
            break
        found = open_calls.intersection(result_ids(message))
        answered.update(found)
        # An answered call needs no further look: stopping here keeps a view linear in its length instead
        # of scanning the rest of the history once per call.
        open_calls.difference_update(found)
        open_calls.difference_update(call_ids(message))
    return answered


def _ids(message: ProjectedMessage, part_type: str) -> list[str]:
    if isinstance(message.content, str):
        return []
    return [str(p.get("toolCallId")) for p in _parts(message.content) if p.get("type") == part_type]


def _parts(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in content if isinstance(p, dict)]
