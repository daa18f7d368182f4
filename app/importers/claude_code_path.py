"""Which lines of a Claude Code transcript make the conversation: the path to the last leaf, and the rest.

Every line names its parent (``parentUuid``; a compact boundary names the line before it with
``logicalParentUuid``). When the user goes back and asks again, the new line's parent is an earlier line
and the old continuation stays in the file as a branch: the conversation is the chain that ends at the last
message line, and the branches it left are reported, not imported. Three things hang beside that chain
without being branches, and are taken with it:
- parallel tool calls: each answer's parent is the line of its own call, so answers and the calls streamed
  after them (the same ``message.id``) sit on side chains of one response;
- hook attachments and other records that lead to no message line;
- earlier conversations in the same file: a plan accepted with "clear context", or a compaction written
  before Claude Code wrote boundaries, starts a new root. Each root's tree gives its own path, in file order.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from app.importers.untyped import as_object

MESSAGE_TYPES = frozenset({"user", "assistant"})


@dataclass(frozen=True, slots=True)
class Entry:
    """A transcript line that takes part in the conversation tree."""

    line: int
    uuid: str
    parent: str | None
    record: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.record.get("type"))

    @property
    def message_id(self) -> str | None:
        message = self.record.get("message")
        value = message.get("id") if isinstance(message, dict) else None
        return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class Paths:
    conversation: list[Entry]
    """The lines of the conversation, in file order."""
    branches: list[list[Entry]]
    """Each branch the conversation left, its lines in file order."""


def conversation_paths(entries: Sequence[Entry]) -> Paths:
    by_uuid = {entry.uuid: entry for entry in entries}
    children: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.parent is not None and entry.parent in by_uuid:
            children.setdefault(entry.parent, []).append(entry)
    included = _leaf_paths(entries, by_uuid)
    _attach_side_records(entries, included, children)
    taken = [entry for entry in entries if entry.uuid in included]
    return Paths(taken, _branches(entries, included, by_uuid))


def _leaf_paths(entries: Sequence[Entry], by_uuid: dict[str, Entry]) -> set[str]:
    """The union of each tree's path from its root to its last message line (its last line if it has none)."""
    root_of: dict[str, str] = {}
    for entry in entries:
        root_of[entry.uuid] = _root(entry, by_uuid, root_of)
    leaves: dict[str, Entry] = {}
    for entry in entries:
        root = root_of[entry.uuid]
        if entry.type in MESSAGE_TYPES or root not in leaves or leaves[root].type not in MESSAGE_TYPES:
            leaves[root] = entry
    included: set[str] = set()
    for leaf in leaves.values():
        current: Entry | None = leaf
        while current is not None and current.uuid not in included:
            included.add(current.uuid)
            current = by_uuid.get(current.parent) if current.parent is not None else None
    return included


def _root(entry: Entry, by_uuid: dict[str, Entry], known: dict[str, str]) -> str:
    walked: list[str] = []
    seen: set[str] = set()
    current = entry
    while True:
        if current.uuid in known:
            root = known[current.uuid]
            break
        walked.append(current.uuid)
        seen.add(current.uuid)
        parent = by_uuid.get(current.parent) if current.parent is not None else None
        if parent is None or parent.uuid in seen:
            root = current.uuid
            break
        current = parent
    for uuid in walked:
        known[uuid] = root
    return root


def _attach_side_records(entries: Sequence[Entry], included: set[str], children: dict[str, list[Entry]]) -> None:
    """Adds, in file order (parents come first), what hangs beside the path without being a branch."""
    leads_to_message = _leading_to_messages(entries, children)
    responses = {entry.message_id for entry in entries if entry.uuid in included and entry.type == "assistant"}
    calls = {call for entry in entries if entry.uuid in included for call in _call_ids(entry)}
    for entry in entries:
        if entry.uuid in included or entry.parent not in included:
            continue
        side = (
            (entry.type == "assistant" and entry.message_id in responses)
            or (entry.type == "user" and _answers_only(entry, calls))
            or (entry.type not in MESSAGE_TYPES and entry.uuid not in leads_to_message)
        )
        if side:
            included.add(entry.uuid)
            calls.update(_call_ids(entry))


def _leading_to_messages(entries: Sequence[Entry], children: dict[str, list[Entry]]) -> set[str]:
    leading: set[str] = set()
    for entry in reversed(entries):
        if any(child.type in MESSAGE_TYPES or child.uuid in leading for child in children.get(entry.uuid, ())):
            leading.add(entry.uuid)
    return leading


def _call_ids(entry: Entry) -> Iterable[str]:
    content = as_object(entry.record.get("message")).get("content")
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            yield block["id"]


def _answers_only(entry: Entry, calls: set[str]) -> bool:
    """A user line holding only tool results, each answering a call already on the path."""
    content = as_object(entry.record.get("message")).get("content")
    if not isinstance(content, list) or not content:
        return False
    return all(
        isinstance(block, dict) and block.get("type") == "tool_result" and str(block.get("tool_use_id")) in calls
        for block in content
    )


def _branches(entries: Sequence[Entry], included: set[str], by_uuid: dict[str, Entry]) -> list[list[Entry]]:
    """Lines off the path, grouped under the first line of each branch."""
    branch_of: dict[str, int] = {}
    branches: list[list[Entry]] = []
    for entry in entries:
        if entry.uuid in included:
            continue
        parent = by_uuid.get(entry.parent) if entry.parent is not None else None
        if parent is not None and parent.uuid in branch_of:
            index = branch_of[parent.uuid]
        else:
            index = len(branches)
            branches.append([])
        branch_of[entry.uuid] = index
        branches[index].append(entry)
    return branches
