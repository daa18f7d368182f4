"""Which imported tool calls never got a result, and which results answer no call in the session.

Both are facts about the source (a turn the user interrupted, a result whose call was left on another
branch), so the importer reports them instead of inventing results: the provider payloads already answer an
unanswered call with an error result saying it was interrupted, and drop an orphan result.
Provider-executed calls carry their result in the assistant message itself and are paired there.
"""

from collections.abc import Sequence

from app.importers.imported import ImportedMessage, ToolCallRef


def unpaired(messages: Sequence[ImportedMessage]) -> tuple[list[ToolCallRef], list[ToolCallRef]]:
    """``(unanswered calls, orphan results)``, each in the order the session holds them."""
    calls: dict[str, str] = {}
    answered: set[str] = set()
    orphans: list[ToolCallRef] = []
    for message in messages:
        if isinstance(message.content, str):
            continue
        for part in message.content:
            call_id = part.get("toolCallId")
            if not isinstance(call_id, str):
                continue
            if part.get("type") == "tool-call":
                calls.setdefault(call_id, message.id)
            elif part.get("type") == "tool-result":
                if call_id in calls:
                    answered.add(call_id)
                else:
                    orphans.append(ToolCallRef(call_id, message.id))
    unanswered = [ToolCallRef(call_id, message_id) for call_id, message_id in calls.items() if call_id not in answered]
    return unanswered, orphans
