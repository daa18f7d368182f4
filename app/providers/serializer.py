"""The serializer: model-view messages (layer 3) to ChatMessages (layer 4).

It converts shapes (string content to parts, AI SDK part keys only), places system text (the request's
system prompt and the leading system notes become one system message first; later notes stay where they
are, for each adapter to place), attaches each runtime reminder to the user turn it belongs to (for every
target the same way; one in a tool loop stays a user message where it stands: ``attach_reminders``) and
repairs combinations no provider accepts (a part a role cannot carry, text a provider cannot take). Every
repair is reported. It never chooses, drops for relevance, trims or compacts: which messages go in is the
model view's decision.

Stored text is kept exactly, NUL characters and unpaired UTF-16 surrogates included, and a provider may not
take them (``app.providers.sendable_text``). The store marks the messages holding such text when they are
written, the mark travels with them (``unusual_text``), and only marked messages are cleaned here, each
change reported naming the message: the others cost nothing. Request text is cleaned where it enters (the
system prompt here, mutations in ``app.providers.mutations``).
"""

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

from app.engine.kinds import Kind
from app.projections.types import ProjectedMessage, Repair
from app.providers.chat_message import PART_KEYS, REQUIRED_STRINGS, ROLE_PARTS, ChatMessage, SystemChatMessage
from app.providers.media import part_media
from app.providers.sendable_text import Changes, clean_text, cleaned

_Shape = tuple[frozenset[str], str, str]


def _shape(part_type: str) -> _Shape:
    """The keys a part of ``part_type`` may hold and the (at most two) keys that must be strings, padded with
    ``type`` (a string in any part whose type was looked up), so that checking them takes no loop."""
    required = REQUIRED_STRINGS[part_type]
    if len(required) > 2:
        raise ValueError(f"{part_type} parts require more than two strings: give _shape a longer tuple")
    first, second = (*required, "type", "type")[:2]
    return PART_KEYS[part_type], first, second


_AS_IS: dict[str, dict[str | None, _Shape]] = {
    role: {part_type: _shape(part_type) for part_type in part_types} for role, part_types in ROLE_PARTS.items()
}
"""Per role, the part types it carries as they are, each with the keys it may hold and the keys that must be
strings: one lookup per part answers "known type" and "allowed for the role" together."""


def to_chat_messages(
    messages: Sequence[ProjectedMessage], *, system: str | None = None, remove_nul: bool = False
) -> tuple[list[ChatMessage], list[Repair]]:
    """ChatMessages for ``messages``, with ``system`` (the request's system prompt) placed first;
    ``remove_nul``: the target refuses NUL characters."""
    return _serialized(messages, system, remove_nul, reminders_attached=False)


def _serialized(
    messages: Sequence[ProjectedMessage], system: str | None, remove_nul: bool, *, reminders_attached: bool
) -> tuple[list[ChatMessage], list[Repair]]:
    """``to_chat_messages``; a history holding a reminder starts over once its reminders are attached (the
    model view sends a reminder as a user string, so only those are checked: most histories hold none)."""
    repairs: list[Repair] = []
    leading: list[str] = []
    if system is not None:
        changes = Changes()
        leading.append(clean_text(system, remove_nul=remove_nul, changes=changes))
        repairs.extend(changes.repairs("the system prompt"))
    # Plain dicts in a loosely typed list: a cast per message would be a call per message.
    converted: list[Any] = []
    for message in messages:
        if message.unusual_text:
            message = _sendable(message, remove_nul, repairs)
        role = message.role
        content = message.content
        if role != "system":
            # The common case: every part well-formed and allowed for the role, so the message goes on as it
            # is (a string as its one text part), without a repair to look for part by part.
            shapes = _AS_IS[role]
            if isinstance(content, str):
                if role == "user" and not reminders_attached and message.semantic_type in REMINDER_KINDS:
                    return _serialized(attach_reminders(messages), system, remove_nul, reminders_attached=True)
                if "text" in shapes:
                    converted.append({"role": role, "content": [{"type": "text", "text": content}]})
                    continue
            else:
                # What ``_clean_part`` and ``_fit`` would keep unchanged, checked without building anything (and
                # without a call per message): dict parts of a type the role carries, with their required
                # strings and no other keys (an assistant image is never as-is: it becomes a file part).
                for part in content:
                    shape = shapes.get(part.get("type")) if isinstance(part, dict) else None
                    if (
                        shape is None
                        or not shape[0].issuperset(part)
                        or not isinstance(part.get(shape[1]), str)
                        or not isinstance(part.get(shape[2]), str)
                    ):
                        break
                else:
                    converted.append({"role": role, "content": content})
                    continue
        chat = _convert(message, repairs)
        if chat is None:
            continue
        if chat["role"] == "system" and not converted:
            leading.append(chat["content"])
            continue
        converted.append(chat)
    system_text = "\n\n".join(text for text in leading if text.strip())
    if system_text:
        head: SystemChatMessage = {"role": "system", "content": system_text}
        converted.insert(0, head)
    return converted, repairs


REMINDER_KINDS = frozenset({Kind.RUNTIME_REMINDER, Kind.AGENT_SWITCH_NOTE, Kind.MODEL_SWITCH_NOTE})
"""What the model view sends as a ``<system-reminder>`` user text: runtime reminders, and agent and model switch
notes marked as reminders."""


def attach_reminders(messages: Sequence[ProjectedMessage]) -> Sequence[ProjectedMessage]:
    """Each reminder inside the user turn it belongs to: appended to the user message right before it (other
    reminders aside), else put first in the user message right after it; else (it came in a tool loop, after
    the assistant spoke) it stays a user message of its own where it stands, with the reminders right after
    it, which the adapters join to the tool results' turn where their provider has one. Where a reminder goes
    depends on nothing after the newest assistant turn before it, so a payload's settled prefix never changes
    when a reminder comes: a reminder that reached back to an earlier prompt would rewrite a cached turn."""
    reminders = [n for n, m in enumerate(messages) if m.semantic_type in REMINDER_KINDS and m.role == "user"]
    if not reminders:
        return messages
    taken = set(reminders)
    user_set = {n for n, m in enumerate(messages) if m.role == "user" and n not in taken}
    before: dict[int, list[int]] = {}
    after: dict[int, list[int]] = {}
    alone: set[int] = set()  # reminders that stay a message of their own, which the ones right after them join
    for n in reminders:
        previous = next((k for k in range(n - 1, -1, -1) if k not in taken), None)
        following = next((k for k in range(n + 1, len(messages)) if k not in taken), None)
        if previous is not None and (previous in user_set or previous in alone):
            after.setdefault(previous, []).append(n)
        elif following is not None and following in user_set:
            before.setdefault(following, []).append(n)
        else:
            taken.discard(n)
            alone.add(n)
    out: list[ProjectedMessage] = []
    for n, message in enumerate(messages):
        if n in taken:
            continue
        if n not in before and n not in after:
            out.append(message)
            continue
        joined = [*before.get(n, []), n, *after.get(n, [])]
        content = [part for k in joined for part in _as_parts(messages[k].content)]
        ids = tuple(source for k in joined for source in messages[k].source_message_ids)
        unusual = any(messages[k].unusual_text for k in joined)
        out.append(replace(message, content=content, source_message_ids=ids, unusual_text=unusual))
    return out


def _as_parts(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _sendable(message: ProjectedMessage, remove_nul: bool, repairs: list[Repair]) -> ProjectedMessage:
    changes = Changes()
    content = cleaned(message.content, remove_nul=remove_nul, changes=changes)
    repairs.extend(changes.repairs("the message", message.source_message_ids))
    return replace(message, content=content, unusual_text=False)


def _convert(message: ProjectedMessage, repairs: list[Repair]) -> ChatMessage | None:
    """A message the as-is check in ``_serialized`` did not pass, part by part, with every change reported."""
    ids = message.source_message_ids
    content = message.content
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    kept = [part for part in (_clean_part(part, message, repairs) for part in parts) if part is not None]
    match message.role:
        case "system":
            texts = [part["text"] for part in kept if part["type"] == "text"]
            if len(texts) != len(kept):
                repairs.append(Repair("system-non-text", "system content takes text only; dropped other parts", ids))
            return {"role": "system", "content": "\n\n".join(texts)}
        case "user":
            return cast(ChatMessage, {"role": "user", "content": _fit(kept, "user", ids, repairs)})
        case "assistant":
            return cast(ChatMessage, {"role": "assistant", "content": _fit(kept, "assistant", ids, repairs)})
        case "tool":
            return cast(ChatMessage, {"role": "tool", "content": _fit(kept, "tool", ids, repairs)})


def _clean_part(given: Any, message: ProjectedMessage, repairs: list[Repair]) -> dict[str, Any] | None:
    """The part in its stored shape (``PART_KEYS``, ``REQUIRED_STRINGS``), or ``None``; every change reported."""
    ids = message.source_message_ids
    part: dict[str, Any] = given if isinstance(given, dict) else {}
    part_type = part.get("type")
    if part_type not in PART_KEYS:
        repairs.append(Repair("unknown-part", f"dropped a part of unknown type {part_type!r}", ids))
        return None
    missing = [key for key in REQUIRED_STRINGS[part_type] if not isinstance(part.get(key), str)]
    if missing:
        repairs.append(Repair("malformed-part", f"dropped a {part_type} part without {', '.join(missing)}", ids))
        return None
    extra = sorted(set(part) - PART_KEYS[part_type])
    if extra:
        repairs.append(Repair("unknown-part-keys", f"removed {', '.join(extra)} from a {part_type} part", ids))
        return {key: value for key, value in part.items() if key in PART_KEYS[part_type]}
    return part


def _fit(parts: list[dict[str, Any]], role: str, ids: tuple[str, ...], repairs: list[Repair]) -> list[dict[str, Any]]:
    """Parts the role may carry; an assistant image becomes a file part (the SDK's assistant form)."""
    fitted = []
    for part in parts:
        if role == "assistant" and part["type"] == "image":
            media = part_media(part)
            file_part = {"type": "file", "data": part["image"], "mediaType": media.media_type}
            repairs.append(Repair("assistant-image-as-file", "an assistant image is sent as a file part", ids))
            fitted.append(file_part)
        elif part["type"] in ROLE_PARTS[role]:
            fitted.append(part)
        else:
            repairs.append(Repair("part-not-allowed", f"a {role} message cannot carry a {part['type']} part", ids))
    return fitted
