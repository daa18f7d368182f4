"""Settling a conversation: the repairs every provider needs, done once before any adapter runs.

After ``settle`` the messages keep these promises, which the adapters rely on:
- no empty or whitespace-only text, no empty unsigned reasoning, no message without content;
- consecutive assistant messages are one turn, and no turn holds only reasoning;
- every assistant tool call is answered at once: the very next message is a tool message holding exactly one
  result per call, in call order, under the call's tool name; tool messages appear nowhere else;
  a call without a result gets an error result saying it was interrupted (or that the user denied it);
- the calls of tools the provider ran itself (``providerExecuted``) are the exception: each is answered by its
  result in the same assistant turn, and is not answered in a tool message; one without its result, and a
  result in an assistant turn without its call, are dropped;
- tool-call ids are unique across the conversation; inputs are JSON objects; tool names are non-empty;
- approval parts are folded into the results they decided;
- the conversation does not end on an assistant turn, unless a prefill was asked for (the turn is then the
  start of the answer the model continues).
Every change is reported as a ``Repair``, except reshaping that loses nothing: results given in several tool
messages, or out of call order, become one tool message in call order. Nothing here knows a provider's
format; it never chooses or trims history and never edits reasoning (signed blocks must reach the provider
byte for byte).
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from app.projections.plain_text import is_blank
from app.projections.types import Repair
from app.providers.chat_message import ChatMessage
from app.providers.tool_definitions import NAME_PATTERN

INTERRUPTED = "[Tool call was interrupted: no result was recorded for it.]"
NO_OUTPUT = "(no output)"
CONTINUE = "Continue from where you left off."
DENIED = "The user denied this tool call."


Message = dict[str, Any]
"""A ChatMessage (or part) while it is being repaired: the same keys, typed loosely so repairs can rebuild it."""


@dataclass(frozen=True, slots=True)
class Settled:
    system: str | None
    """The leading system text (request prompt and leading system notes); later notes stay in ``messages``."""
    messages: list[Message]
    """ChatMessages keeping the promises above, in order; the leading system message is in ``system``."""
    opens_conversation: bool = True
    """False for messages that continue a conversation whose start is built apart (a later turn's tail,
    ``app.services.turn_splice``): an adapter then makes up no first user turn before them."""


def settle(messages: Sequence[ChatMessage], *, prefill: bool = False) -> tuple[Settled, list[Repair]]:
    """The messages keeping the promises above. Messages that need no repair are passed on as they are, not
    copied (the adapters never edit one in place), and the repairing passes run only from the turn where the
    first repair may be needed: most conversations keep every promise but how they end, and skip them.
    ``prefill``: a trailing assistant turn stays last instead of getting a user turn after it."""
    settled, passes = settle_in_passes(messages, prefill=prefill)
    return settled, [repair for found in passes for repair in found]


SETTLE_PASSES = 6
"""Cleaning, joining assistant turns, pairing calls and results, joining again, dropping turns that only
think, and the ending."""


def settle_in_passes(
    messages: Sequence[ChatMessage], *, prefill: bool = False
) -> tuple[Settled, tuple[list[Repair], ...]]:
    """``settle``, its repairs pass by pass (``SETTLE_PASSES``), each pass's in the order of the messages: what a
    later turn's build needs to tell the repairs of the messages before its cut from the rest."""
    passes: tuple[list[Repair], ...] = tuple([] for _ in range(SETTLE_PASSES))
    repairs = passes[-1]
    system: str | None = None
    rest: list[Message] = list(messages)  # type: ignore[arg-type]
    if rest and rest[0]["role"] == "system":
        system = rest.pop(0)["content"].strip() or None
    kept = _settled_prefix(rest)
    if kept < len(rest):
        rest = rest[:kept] + _repaired(rest[kept:], _call_ids(rest[:kept]), passes)
    if rest and rest[-1]["role"] == "assistant" and not prefill:
        rest.append({"role": "user", "content": [{"type": "text", "text": CONTINUE}]})
        repairs.append(Repair("ends-on-assistant", f"added a user turn {CONTINUE!r} after the last assistant turn"))
    if not any(message["role"] != "system" for message in rest):
        # Only system text, or messages the repairs emptied: still a valid request. (A request with nothing
        # at all is refused earlier, by the /chat pipeline.)
        rest.append({"role": "user", "content": [{"type": "text", "text": CONTINUE}]})
        repairs.append(Repair("no-conversation", f"added a user turn {CONTINUE!r}: nothing else was left to send"))
    return Settled(system, rest), passes


def _settled_prefix(messages: list[Message]) -> int:
    """How many leading messages the repairing passes would leave as they are, without a report: all of them
    for most conversations. Checked in one pass that builds nothing.

    Messages pass while each is clean as it is, no assistant follows an assistant, no turn only thinks, and each
    turn's calls (non-empty ids, not used before) are answered by the next message alone: a tool message with
    no other keys and one text result per call, in call order, under the call's id and tool name. When one
    fails, the prefix ends before the last assistant turn that is clean as it is and follows no assistant: that
    turn stays a turn of its own, so nothing the repairs do after it (a merge, a late or duplicate result)
    reaches back before it, and all they need to know of the prefix is its call ids.
    """
    used_ids: set[str] = set()
    calls: list[dict[str, Any]] = []  # the previous assistant's calls, which this message must answer
    previous_role = None
    cut = 0
    for index, message in enumerate(messages):
        role = message["role"]
        content = message["content"]
        if calls:
            if role != "tool" or len(message) != 2 or len(content) != len(calls) or not _clean_as_is(content):
                return cut
            # By position, the lengths being equal: a zip with ``strict`` is a keyword call per tool message.
            for position, call in enumerate(calls):
                result = content[position]
                if result["toolCallId"] != call["toolCallId"] or result["toolName"] != call["toolName"]:
                    return cut
            calls = []
        elif role == "user":
            if not _clean_as_is(content):
                return cut
        elif role == "assistant":
            if previous_role == "assistant" or not _clean_as_is(content):
                return cut
            cut = index
            only_reasoning = True
            for part in content:
                kind = part["type"]
                if "providerExecuted" in part or kind == "tool-result":
                    return cut  # answered within the turn: the repairing passes check the pairs
                if kind == "tool-call":
                    call_id = part["toolCallId"]
                    if not call_id or call_id in used_ids:
                        return cut
                    used_ids.add(call_id)
                    calls.append(part)
                only_reasoning = only_reasoning and kind == "reasoning"
            if only_reasoning:
                return cut
        elif role == "system":
            if not content.strip():
                return cut
        else:
            return cut  # a tool message that answers no call, or a role settle does not know
        previous_role = role
    return cut if calls else len(messages)


def _call_ids(messages: list[Message]) -> set[str]:
    """The ids of the calls in these assistant turns, which calls after them must not reuse."""
    return {
        part["toolCallId"]
        for message in messages
        if message["role"] == "assistant"
        for part in message["content"]
        if part["type"] == "tool-call"
    }


def _repaired(messages: list[Message], used_ids: set[str], passes: tuple[list[Repair], ...]) -> list[Message]:
    """Every repair but the ending ones, for messages after a prefix whose calls use ``used_ids``, each pass
    listing its own in ``passes``; messages and parts are rebuilt, never edited in place."""
    decisions = _approval_decisions(messages)
    cleaned = [message for message in (_clean(m, passes[0]) for m in messages) if message is not None]
    merged = _merge_assistant_turns(cleaned, passes[1])
    # Dropping orphan results can leave two assistant turns side by side: join them again.
    paired = _merge_assistant_turns(_pair_tool_calls(merged, decisions, used_ids, passes[2]), passes[3])
    return [message for message in paired if not _only_reasoning(message, passes[4])]


def _only_reasoning(message: Message, repairs: list[Repair]) -> bool:
    """A turn that only thought is an aborted one: no provider takes a turn ending in reasoning."""
    if message["role"] != "assistant":
        return False
    for part in message["content"]:  # a loop, not any(): no generator for each of thousands of turns
        if part["type"] != "reasoning":
            return False
    repairs.append(Repair("reasoning-only-turn", "dropped an assistant turn that holds nothing but reasoning"))
    return True


def _approval_decisions(messages: Sequence[Message]) -> dict[str, tuple[bool, str | None]]:
    """Tool-call id -> (approved, reason), from approval requests and their responses. A request decides a
    call only in the call's own turn (consecutive assistant messages are one): one that comes after a later
    turn began would rewrite a result the conversation has moved on from, and a payload's settled prefix."""
    call_of: dict[str, str] = {}
    answers: dict[str, tuple[bool, str | None]] = {}
    call_turn: dict[str, int] = {}
    turn = 0
    previous_role = None
    for message in messages:
        role = message["role"]
        if role == "assistant" and previous_role != "assistant":
            turn += 1
        previous_role = role
        if role == "system":
            continue
        for part in message["content"]:
            if part["type"] == "tool-call" and role == "assistant":
                call_turn[part["toolCallId"]] = turn
            elif part["type"] == "tool-approval-request" and call_turn.get(part["toolCallId"]) == turn:
                call_of[part["approvalId"]] = part["toolCallId"]
            elif part["type"] == "tool-approval-response":
                answers[part["approvalId"]] = (bool(part.get("approved")), part.get("reason"))
    return {call_of[approval]: answer for approval, answer in answers.items() if approval in call_of}


def _clean(message: Message, repairs: list[Repair]) -> Message | None:
    if message["role"] == "system":
        if message["content"].strip():
            return message
        repairs.append(Repair("empty-message", "dropped an empty system note"))
        return None
    content = message["content"]
    if _clean_as_is(content):
        return message
    parts: list[dict[str, Any]] = []
    for part in content:
        match part["type"]:
            case "text" if not part["text"].strip():
                repairs.append(
                    Repair("empty-text", f"dropped an empty or whitespace-only text part ({message['role']})")
                )
            case "reasoning" if not part["text"].strip() and not part.get("providerOptions"):
                repairs.append(Repair("empty-reasoning", "dropped an empty unsigned reasoning part"))
            case "tool-approval-request" | "tool-approval-response":
                repairs.append(Repair("approval-folded", f"a {part['type']} part is folded into the tool result"))
            case "tool-call":
                parts.append(_clean_call(part, repairs))
            case "tool-result":
                parts.append(_clean_result(part, repairs))
            case _:
                parts.append(part)
    if not parts:
        repairs.append(Repair("empty-message", f"dropped a {message['role']} message left without content"))
        return None
    return {**message, "content": parts}


def _clean_as_is(parts: list[dict[str, Any]]) -> bool:
    """Parts ``_clean`` keeps exactly as they are (checked before building anything): non-blank text,
    reasoning that is non-blank or signed, calls with a tool name and an object input, and text results
    that are not blank; anything else takes the repairing path."""
    if not parts:
        return False
    for part in parts:
        # The parts of a long history, most frequent first (a match tries its cases in order).
        match part["type"]:
            case "tool-result":
                output = part.get("output")
                if not isinstance(output, dict) or output.get("type") not in _TEXT_OUTPUTS:
                    return False
                value = output["value"]
                if not isinstance(value, str) or is_blank(value):
                    return False
            case "tool-call":
                if not _SENDABLE_NAME(part["toolName"]) or not isinstance(part.get("input"), dict):
                    return False
            case "text":
                if is_blank(part["text"]):
                    return False
            case "reasoning":
                if is_blank(part["text"]) and not part.get("providerOptions"):
                    return False
            case "tool-approval-request" | "tool-approval-response":
                return False
    return True


_TEXT_OUTPUTS = frozenset({"text", "error-text"})
_SENDABLE_NAME = re.compile(NAME_PATTERN).fullmatch
"""A tool name every provider takes in a history: OpenAI refuses another ("Invalid
'messages[9].tool_calls[0].function.name': string does not match pattern"), as it does in a definition."""
_UNSENDABLE_CHARACTER = re.compile(r"[^a-zA-Z0-9_-]")


def _clean_call(part: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    call = dict(part)
    name = call["toolName"]
    if not name.strip():
        call["toolName"] = "unnamed_tool"
        repairs.append(Repair("tool-name-empty", f"tool call {call['toolCallId']!r} had no tool name"))
    elif not _SENDABLE_NAME(name):
        # No tool the request defines can have such a name (definitions are held to the pattern), so the
        # renamed call names no tool the model may call; its result takes the new name when it is paired.
        call["toolName"] = _UNSENDABLE_CHARACTER.sub("_", name)[:64]
        repairs.append(
            Repair("tool-name-sendable", f"tool call {call['toolCallId']!r}: {name!r} sent as {call['toolName']!r}")
        )
    value = call.get("input")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass
        else:
            repairs.append(Repair("tool-input-string", f"parsed the JSON string input of {call['toolCallId']!r}"))
    if not isinstance(value, dict):
        repairs.append(Repair("tool-input-object", f"wrapped the non-object input of {call['toolCallId']!r}"))
        value = {} if value is None else {"input": value}
    call["input"] = value
    return call


def _clean_result(part: dict[str, Any], repairs: list[Repair]) -> dict[str, Any]:
    output: dict[str, Any] = part["output"] if isinstance(part.get("output"), dict) else {}
    kind = output.get("type")
    fixed: dict[str, Any] | None = None
    match kind:
        case "text" | "error-text":
            if not isinstance(output["value"], str) or not output["value"].strip():
                fixed = {"type": kind, "value": NO_OUTPUT}
        case "json" | "error-json":
            if "value" not in output:
                fixed = {"type": kind, "value": None}
        case "content":
            items = [item for item in output.get("value") or [] if _content_item_kept(item)]
            if not items:
                fixed = {"type": "text", "value": NO_OUTPUT}
            elif len(items) != len(output["value"]):
                fixed = {"type": "content", "value": items}
        case "execution-denied":
            pass
        case _:
            fixed = {"type": "text", "value": NO_OUTPUT}
    if fixed is None:
        return part
    repairs.append(Repair("empty-tool-result", f"tool result {part['toolCallId']!r} was empty or malformed"))
    return {**part, "output": fixed}


def _content_item_kept(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    if item.get("type") == "text":
        return isinstance(item.get("text"), str) and bool(item["text"].strip())
    return True


def _merge_assistant_turns(messages: list[Message], repairs: list[Repair]) -> list[Message]:
    merged: list[Message] = []
    for message in messages:
        if message["role"] == "assistant" and merged and merged[-1]["role"] == "assistant":
            previous = merged[-1]
            merged[-1] = {**previous, "content": [*previous["content"], *message["content"]]}
            repairs.append(Repair("merged-assistant-turns", "joined two consecutive assistant messages into one turn"))
        else:
            merged.append(message)
    return merged


def _pair_tool_calls(
    messages: list[Message],
    decisions: dict[str, tuple[bool, str | None]],
    used_ids: set[str],
    repairs: list[Repair],
) -> list[Message]:
    """Answer every call in the message right after its turn; drop results nobody asked for. Call ids are
    made unique against ``used_ids`` too (those of the messages before these), and added to it."""
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message["role"] == "tool":
            for part in message["content"]:
                repairs.append(
                    Repair("orphan-tool-result", f"dropped result {part['toolCallId']!r}: no call before it")
                )
            continue
        if message["role"] != "assistant":
            out.append(message)
            continue
        turn_end = index
        while turn_end < len(messages) and messages[turn_end]["role"] != "assistant":
            turn_end += 1
        turn, index = messages[index:turn_end], turn_end
        assistant, calls = _unique_calls(_answered_in_turn(message, repairs), used_ids, repairs)
        if assistant["content"]:
            out.append(assistant)
        else:
            repairs.append(Repair("empty-message", "dropped an assistant message left without content"))
        others: list[Message] = []
        results: dict[int, dict[str, Any]] = {}
        for item in turn:
            if item["role"] != "tool":
                others.append(item)
                continue
            _report_dropped_keys(item, repairs)
            if others:
                repairs.append(
                    Repair(
                        "moved-after-tool-results", "moved messages sent between a call and its result after the result"
                    )
                )
            for part in item["content"]:
                slot = _open_slot(calls, results, part["toolCallId"])
                if slot is None:
                    known = any(original == part["toolCallId"] for original, _, _ in calls)
                    rule, why = (
                        ("duplicate-tool-result", "a result for it was already given")
                        if known
                        else ("orphan-tool-result", "no call before it")
                    )
                    repairs.append(Repair(rule, f"dropped result {part['toolCallId']!r}: {why}"))
                    continue
                original, new_id, name = calls[slot]
                if part["toolName"] != name:
                    repairs.append(
                        Repair("tool-result-name", f"result {original!r} named after its call's tool {name!r}")
                    )
                same = part["toolCallId"] == new_id and part["toolName"] == name
                results[slot] = part if same else {**part, "toolCallId": new_id, "toolName": name}
        if calls:
            answers = []
            for slot, (original, new_id, name) in enumerate(calls):
                if slot in results:
                    answers.append(results[slot])
                    continue
                answers.append(_missing_result(original, new_id, name, decisions, repairs))
            out.append({"role": "tool", "content": answers})
        out.extend(others)
    return out


def _answered_in_turn(message: Message, repairs: list[Repair]) -> Message:
    """The turn with each provider-executed call followed by its result (the provider answered it in the turn):
    a call without a result after it, and a result in the turn without its call before it, are dropped. A
    result in an assistant turn answers only a provider-executed call, whatever its own flag says."""
    content = message["content"]
    open_calls: dict[str, list[int]] = {}
    paired: set[int] = set()
    for index, part in enumerate(content):
        if part["type"] == "tool-call" and part.get("providerExecuted"):
            open_calls.setdefault(part["toolCallId"], []).append(index)
        elif part["type"] == "tool-result" and open_calls.get(part["toolCallId"]):
            paired.update((open_calls[part["toolCallId"]].pop(0), index))
    kept: list[dict[str, Any]] = []
    for index, part in enumerate(content):
        executed = part["type"] == "tool-result" or (part["type"] == "tool-call" and part.get("providerExecuted"))
        if not executed or index in paired:
            kept.append(part)
        elif part["type"] == "tool-result":
            repairs.append(
                Repair("orphan-provider-result", f"dropped result {part['toolCallId']!r}: no provider-executed call")
            )
        else:
            repairs.append(
                Repair("unanswered-provider-call", f"dropped provider-executed call {part['toolCallId']!r}: no result")
            )
    return message if len(kept) == len(content) else {**message, "content": kept}


def _report_dropped_keys(message: Message, repairs: list[Repair]) -> None:
    """A tool message is rebuilt from its results alone; anything else it carried does not go on."""
    dropped = sorted(key for key in message if key not in ("role", "content"))
    if dropped:
        repairs.append(Repair("tool-message-keys", f"dropped {', '.join(dropped)} of a tool message"))


def _open_slot(calls: list[tuple[str, str, str]], answered: dict[int, Any], call_id: str) -> int | None:
    """The first call with this (original) id that has no result yet; reused ids are answered in order."""
    return next((n for n, (original, _, _) in enumerate(calls) if original == call_id and n not in answered), None)


def _unique_calls(
    message: Message, used_ids: set[str], repairs: list[Repair]
) -> tuple[Message, list[tuple[str, str, str]]]:
    """The assistant turn with conversation-unique call ids, and its calls as (original, new id, name). The
    calls the provider ran are made unique too (with their results, in the turn), but are not returned: no tool
    message answers them."""
    calls: list[tuple[str, str, str]] = []
    parts = []
    renamed = False
    executed: dict[str, list[str]] = {}  # original id -> new ids of the provider-executed calls, in order
    for part in message["content"]:
        if part["type"] == "tool-result":
            new_ids = executed.get(part["toolCallId"])
            if new_ids:
                new_id = new_ids.pop(0)
                renamed = renamed or new_id != part["toolCallId"]
                parts.append(part if new_id == part["toolCallId"] else {**part, "toolCallId": new_id})
                continue
        if part["type"] != "tool-call":
            parts.append(part)
            continue
        original = part["toolCallId"]
        new_id = original
        suffix = 2
        while new_id in used_ids or not new_id:
            new_id = f"{original or 'call'}_{suffix}"
            suffix += 1
        if new_id != original:
            repairs.append(
                Repair("duplicate-tool-call-id", f"tool call id {original!r} was reused; this call is {new_id!r}")
            )
        used_ids.add(new_id)
        if part.get("providerExecuted"):
            executed.setdefault(original, []).append(new_id)
        else:
            calls.append((original, new_id, part["toolName"]))
        if new_id == original:
            parts.append(part)
        else:
            parts.append({**part, "toolCallId": new_id})
            renamed = True
    # A turn whose ids all stay is passed on as it is; nothing downstream edits a message in place.
    return ({**message, "content": parts} if renamed else message), calls


def _missing_result(
    original: str, new_id: str, name: str, decisions: dict[str, tuple[bool, str | None]], repairs: list[Repair]
) -> dict[str, Any]:
    approved, reason = decisions.get(original, (True, None))
    if not approved:
        repairs.append(Repair("denied-tool-call", f"call {original!r} was denied by the user; said so as its result"))
        output: dict[str, Any] = {"type": "execution-denied"}
        if reason:
            output["reason"] = reason
    else:
        repairs.append(Repair("interrupted-tool-call", f"call {original!r} had no result; added an error result"))
        output = {"type": "error-text", "value": INTERRUPTED}
    return {"type": "tool-result", "toolCallId": new_id, "toolName": name, "output": output}


class UnsettledMessage(Exception):
    """An adapter was handed a role or a part that ``settle`` never lets through: a bug here, not bad input."""


def unsettled(adapter: str, found: str) -> NoReturn:
    """Every adapter's dispatch ends here for what it does not know, so a new role or part type that an
    adapter forgets fails the first test that sends one instead of vanishing from a payload."""
    raise UnsettledMessage(f"{adapter}: {found} cannot reach an adapter after settle")


START = "[Start of conversation]"
"""The user turn put before a history that opens with the assistant, for providers that must start on user."""


def wrap_system_note(text: str) -> str:
    """A later system note as user text, for providers without mid-conversation system messages."""
    return f"<system-reminder>\n{text}\n</system-reminder>"
