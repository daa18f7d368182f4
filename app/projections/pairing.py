"""Keeping tool calls and their results together in a view.

Two passes over projected messages. ``drop_unanswerable_results`` removes result parts whose call is not
earlier in the view (cut off where the live history starts, dropped with its assistant message, or never made):
a result without its call is a 400 at every provider. ``keep_results_next_to_calls`` moves anything that sits
between a call and its results (a reminder, a bash run, a queued user message) to just after those results,
so no view ever separates them. Both report every change; neither invents a result (a call left without one
is the provider adapter's to settle, per target).
"""

from bisect import bisect_right
from collections import deque
from dataclasses import replace
from typing import Any

from app.projections.types import Diagnostics, ProjectedMessage, Repair


def call_ids(message: ProjectedMessage) -> list[str]:
    return _ids(message, "tool-call") if message.role == "assistant" else []


def result_ids(message: ProjectedMessage) -> list[str]:
    return _ids(message, "tool-result") if message.role == "tool" else []


def needs_pairing_repairs(messages: list[ProjectedMessage]) -> bool:
    """Whether either pass below would change anything: one walk over the parts, so a well-formed history
    (every result after its call, nothing between a call and its results) is not walked twice more.

    A result whose id no earlier call made needs ``drop_unanswerable_results``; any non-tool message while
    a call of the last assistant message is still unanswered may need ``keep_results_next_to_calls`` (that
    pass holds only calls answered later, a subset of these, so when none is pending it moves nothing).
    """
    seen: set[str] = set()
    pending: set[str] = set()
    for message in messages:
        role = message.role
        content = message.content
        if role == "tool":
            if not isinstance(content, str):
                for part in content:
                    if part.get("type") == "tool-result":
                        call_id = part.get("toolCallId")
                        if call_id not in seen:
                            return True
                        pending.discard(call_id)  # found in ``seen``: one of its strings
            continue
        if pending:
            return True
        if role == "assistant" and not isinstance(content, str):
            # call_ids, inlined: this walk runs over every message of a long history. Nothing is pending here
            # (it would have answered above), so this turn's calls are the pending ones.
            for part in content:
                if isinstance(part, dict) and part.get("type") == "tool-call":
                    call_id = str(part.get("toolCallId"))
                    pending.add(call_id)
                    seen.add(call_id)
    return False


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
    # Tool messages never move, so "is this call answered later?" is a lookup in their original positions
    # (linear overall) rather than a scan of everything that follows each call.
    calls = [call_ids(m) for m in messages]
    results = [result_ids(m) for m in messages]
    results_at: dict[str, list[int]] = {}
    calls_at: dict[str, list[int]] = {}
    for index, (called, answered) in enumerate(zip(calls, results, strict=True)):
        for call_id in called:
            calls_at.setdefault(call_id, []).append(index)
        for call_id in answered:
            results_at.setdefault(call_id, []).append(index)
    queue = deque(range(len(messages)))
    out: list[int] = []
    held: list[int] = []
    pending: set[str] = set()
    waiting_for: list[str] = []
    last_tool = -1
    while queue:
        index = queue.popleft()
        message = messages[index]
        if pending and message.role != "tool":
            held.append(index)
            continue
        out.append(index)
        if message.role == "assistant":
            pending = {c for c in calls[index] if _answered_later(c, index, last_tool, results_at, calls_at)}
            waiting_for = sorted(pending)
        elif message.role == "tool":
            last_tool = index
            pending.difference_update(results[index])
        if held and not pending:
            moved = tuple(source for i in held for source in messages[i].source_message_ids)
            detail = f"moved {', '.join(moved)} after the results of {', '.join(waiting_for)}"
            diagnostics.repairs.append(Repair("results-follow-calls", detail, moved))
            for source in moved:
                diagnostics.reasons.setdefault(source, []).append(detail)
            queue.extendleft(reversed(held))
            held = []
    return [messages[i] for i in [*out, *held]]


def _answered_later(
    call_id: str, call_at: int, last_tool: int, results_at: dict[str, list[int]], calls_at: dict[str, list[int]]
) -> bool:
    """A result for the call is still to come, before any later call reuses the same id."""
    results = results_at.get(call_id, [])
    next_result = bisect_right(results, last_tool)
    if next_result == len(results):
        return False
    later_calls = calls_at[call_id]
    next_call = bisect_right(later_calls, call_at)
    return next_call == len(later_calls) or results[next_result] < later_calls[next_call]


def _ids(message: ProjectedMessage, part_type: str) -> list[str]:
    if isinstance(message.content, str):
        return []
    return [str(p.get("toolCallId")) for p in _parts(message.content) if p.get("type") == part_type]


def _parts(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in content if isinstance(p, dict)]
