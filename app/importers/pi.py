"""pi's session files (``~/.pi/agent/sessions/<dir>/<time>_<id>.jsonl``) as one session of messages.

The first line is the header (``type: session``: the session id, working directory, version). Entries of
version 2 and later form a tree by ``id``/``parentId``: the conversation is the path from the last entry to
the root (pi appends every entry to the leaf it is on, so the last entry is the leaf), and entries off it are
reported as branches. Version 1 files are a plain sequence without ids: an entry's id is then ``e`` and its
position among the file's JSON objects (the header is 0), as pi's own migration numbers them.

- ``message`` entries by role: ``user``, ``assistant`` (thinking with its signature in the provider's
  ``providerOptions``; model, usage, stop reason into metadata), ``toolResult`` (a tool message; ``isError``
  an error output; ``details`` kept in metadata), ``bashExecution`` (``bash_execution``), ``custom`` and the
  older ``hookMessage`` (``custom``), ``branchSummary`` (``branch_summary``), ``compactionSummary``.
- ``compaction``: a ``compact_boundary`` (the entry's id) and its ``compact_summary`` (id + ``:summary``);
  the boundary names the last message the summary covers: the one before ``firstKeptEntryId``.
- ``branch_summary`` and ``custom_message`` entries become ``branch_summary`` and ``custom`` messages;
  ``model_change`` and ``thinking_level_change`` become ``model_switch_note`` markers (the model view leaves
  them out); ``custom`` entries (an extension's state) become runtime facts; ``session_info`` names the
  session; ``label`` entries are skipped.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from app.engine.kinds import Kind, Role
from app.engine.persisted import Content
from app.engine.timestamps import from_epoch_ms, from_iso
from app.importers.display_details import kept_details
from app.importers.imported import (
    Branch,
    ImportedMessage,
    ImportedSession,
    ImportRefused,
    ImportReport,
    ImportResult,
    Repair,
    Skipped,
)
from app.importers.options import ImportOptions
from app.importers.pairing import unpaired
from app.importers.reading import Record, read_json_lines, report_of
from app.importers.unexpected import reading_line
from app.importers.untyped import as_object

FORMAT = "pi"
ENTRY_TYPES = frozenset(
    {
        "message",
        "compaction",
        "branch_summary",
        "custom_message",
        "custom",
        "model_change",
        "thinking_level_change",
        "label",
        "session_info",
    }
)
MESSAGE_ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage", "branchSummary", "compactionSummary"}
)
BASH_FACTS = ("command", "output", "exitCode", "cancelled", "truncated", "fullOutputPath", "excludeFromContext")
"""A bash execution's fields, kept under the same names in the message's metadata."""
FINISH_REASONS = {"stop": "stop", "length": "length", "toolUse": "tool-calls", "error": "error", "aborted": "aborted"}
USAGE_KEYS = {
    "inputTokens": "input",
    "outputTokens": "output",
    "cacheReadTokens": "cacheRead",
    "cacheWriteTokens": "cacheWrite",
    "totalTokens": "totalTokens",
}


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str
    """The entry's id, or for version 1 ``e<position>``."""
    parent: str | None
    line: int
    value: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.value.get("type"))


def parse(data: bytes, options: ImportOptions) -> ImportResult:
    reading = read_json_lines(data)
    report = report_of(FORMAT, reading)
    header = _header(reading.records, options)
    entries = _entries(reading.records, header, report)
    options.refuse_invalid(report)
    path, branches = _conversation(entries)
    for branch in branches:
        report.branches.append(Branch(branch[0].line, len({entry.line for entry in branch}), _branch_ids(branch)))
    builder = _Builder(report, header)
    for entry in path:
        with reading_line(report, entry.line):
            builder.add(entry)
    options.refuse_invalid(report)
    report.unanswered_calls, report.orphan_results = unpaired(builder.messages)
    session = ImportedSession(
        id=options.session_id or str(header.get("id")),
        title=builder.title,
        model=builder.model,
        metadata={"source": FORMAT, "pi": builder.facts},
        messages=builder.messages,
        settled=len(builder.messages),
    )
    return ImportResult([session], report)


def _header(records: list[Record], options: ImportOptions) -> dict[str, Any]:
    first = records[0].value if records else None
    if isinstance(first, dict) and first.get("type") == "session" and isinstance(first.get("id"), str):
        return first
    if options.session_id is None:
        line = records[0].line if records else None
        raise ImportRefused(line, "not a pi session: the first line is not its header (type: session, with an id)")
    return {"type": "session", "id": options.session_id}


def _entries(records: list[Record], header: dict[str, Any], report: ImportReport) -> list[_Entry]:
    tree = _is_tree(records, header)
    entries: list[_Entry] = []
    previous: str | None = None
    for position, record in enumerate(records):
        value = record.value
        if value is header:
            continue
        kind = value.get("type") if isinstance(value, dict) else None
        if not isinstance(kind, str) or kind not in ENTRY_TYPES or not isinstance(value, dict):
            what = f"unknown entry type {kind!r}" if isinstance(kind, str) else "not a pi entry (an object with a type)"
            report.invalid.append(Skipped(record.line, what))
            continue
        if kind == "message" and (message := value.get("message")) is not None:
            role = message.get("role") if isinstance(message, dict) else None
            if not isinstance(role, str) or role not in MESSAGE_ROLES:
                report.invalid.append(Skipped(record.line, f"message of unknown role {role!r}"))
                continue
        elif kind == "message":
            report.invalid.append(Skipped(record.line, "message entry without a message"))
            continue
        if tree:
            key, parent = value.get("id"), value.get("parentId")
            if not isinstance(key, str) or not key:
                report.invalid.append(Skipped(record.line, f"{kind} entry without an id"))
                continue
            entries.append(_Entry(key, parent if isinstance(parent, str) else None, record.line, value))
        else:
            key = f"e{position}"
            entries.append(_Entry(key, previous, record.line, value))
            previous = key
    return entries


def _conversation(entries: list[_Entry]) -> tuple[list[_Entry], list[list[_Entry]]]:
    """The path from the last entry to the root, in file order, and the branches off it."""
    if not entries:
        return [], []
    by_key = {entry.key: entry for entry in entries}
    on_path: set[str] = set()
    current: _Entry | None = entries[-1]
    while current is not None and current.key not in on_path:
        on_path.add(current.key)
        current = by_key.get(current.parent) if current.parent is not None else None
    branch_of: dict[str, int] = {}
    branches: list[list[_Entry]] = []
    for entry in entries:
        if entry.key in on_path:
            continue
        index = branch_of.get(entry.parent) if entry.parent is not None else None
        if index is None:
            index = len(branches)
            branches.append([])
        branch_of[entry.key] = index
        branches[index].append(entry)
    return [entry for entry in entries if entry.key in on_path], branches


@dataclass(slots=True)
class _Builder:
    report: ImportReport
    header: dict[str, Any]
    messages: list[ImportedMessage] = field(default_factory=list)
    emitted_before: dict[str, int] = field(default_factory=dict)
    """How many messages came before each entry: where a compaction's first kept entry starts."""
    title: str | None = None
    model: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.facts = {k: self.header[k] for k in ("cwd", "version", "parentSession") if k in self.header}
        self._model(self.header.get("provider"), self.header.get("modelId"))
        if isinstance(self.header.get("thinkingLevel"), str):
            self.facts["thinkingLevel"] = self.header["thinkingLevel"]

    def add(self, entry: _Entry) -> None:
        self.emitted_before[entry.key] = len(self.messages)
        value = entry.value
        match entry.type:
            case "message":
                self._message(entry, value["message"])
            case "compaction":
                self._compaction(entry, value.get("summary"), _first_kept(value))
            case "branch_summary":
                self._branch_summary(entry, entry.key, value)
            case "custom_message":
                self._custom(entry, entry.key, value)
            case "custom":
                facts = {"customType": value.get("customType")}
                if kept_details(
                    value.get("data"), what="data", line=entry.line, message_id=entry.key, report=self.report
                ):
                    facts["data"] = value.get("data")
                metadata = {"eligibleForModelContext": False, "visibleInTranscript": False, "pi": facts}
                self._emit(entry, entry.key, "system", f"extension state: {value.get('customType')}", metadata)
            case "model_change":
                self._model(value.get("provider"), value.get("modelId"))
                text = f"Model changed to {value.get('provider')}/{value.get('modelId')}"
                self._switch(entry, text, {"provider": value.get("provider"), "modelId": value.get("modelId")})
            case "thinking_level_change":
                self.facts["thinkingLevel"] = value.get("thinkingLevel")
                text = f"Thinking level changed to {value.get('thinkingLevel')}"
                self._switch(entry, text, {"thinkingLevel": value.get("thinkingLevel")})
            case "label":
                self.report.skipped.append(Skipped(entry.line, f"label: a bookmark on entry {value.get('targetId')}"))
            case "session_info":
                name = value.get("name")
                self.title = name if isinstance(name, str) and name else None

    def _message(self, entry: _Entry, message: dict[str, Any]) -> None:
        role = message.get("role")
        match role:
            case "user":
                self._emit(entry, entry.key, "user", _user_content(message.get("content")), {})
            case "assistant":
                self._assistant(entry, message)
            case "toolResult":
                self._tool_result(entry, message)
            case "bashExecution":
                facts = {key: message[key] for key in BASH_FACTS if key in message}
                metadata: dict[str, Any] = {"runtimeKind": Kind.BASH_EXECUTION.value, **facts}
                self._emit(entry, entry.key, "user", str(message.get("command", "")), metadata)
            case "custom" | "hookMessage":
                self._custom(entry, entry.key, message)
            case "branchSummary":
                self._branch_summary(entry, entry.key, message)
            case "compactionSummary":
                self._compaction(entry, message.get("summary"), None, boundary_id=f"{entry.key}:boundary")

    def _assistant(self, entry: _Entry, message: dict[str, Any]) -> None:
        provider, api = message.get("provider"), message.get("api")
        parts = list(_assistant_parts(message.get("content"), provider, api))
        metadata: dict[str, Any] = {}
        if isinstance(provider, str) and isinstance(message.get("model"), str):
            metadata.update(provider=provider, model=message["model"])
            self._model(provider, message["model"])
        raw_usage = as_object(message.get("usage"))
        usage = {
            ours: raw_usage[theirs] for ours, theirs in USAGE_KEYS.items() if isinstance(raw_usage.get(theirs), int)
        }
        if usage:
            metadata["usage"] = usage
        finish = FINISH_REASONS.get(str(message.get("stopReason")))
        if finish is not None:
            metadata["finishReason"] = finish
        if isinstance(message.get("errorMessage"), str):
            metadata["errorMessage"] = message["errorMessage"]
        facts: dict[str, Any] = {"api": api} if isinstance(api, str) else {}
        cost = as_object(raw_usage.get("cost")).get("total")
        if isinstance(cost, int | float):
            facts["cost"] = cost
        if facts:
            metadata["pi"] = facts
        self._emit(entry, entry.key, "assistant", parts, metadata)

    def _tool_result(self, entry: _Entry, message: dict[str, Any]) -> None:
        part = {
            "type": "tool-result",
            "toolCallId": str(message.get("toolCallId", "")),
            "toolName": str(message.get("toolName") or "unknown"),
            "output": _result_output(message.get("content"), message.get("isError") is True),
        }
        metadata: dict[str, Any] = {}
        if "details" in message and kept_details(
            message["details"], what="details", line=entry.line, message_id=entry.key, report=self.report
        ):
            metadata["pi"] = {"details": message["details"]}
        self._emit(entry, entry.key, "tool", [part], metadata)

    def _compaction(
        self, entry: _Entry, summary: Any, first_kept: str | None, *, boundary_id: str | None = None
    ) -> None:
        boundary_id = boundary_id or entry.key
        metadata: dict[str, Any] = {"runtimeKind": Kind.COMPACT_BOUNDARY.value}
        kept_from = len(self.messages)
        if first_kept in self.emitted_before:
            kept_from = self.emitted_before[first_kept]
        elif first_kept is not None:
            detail = f"first kept entry {first_kept} is not on the path: nothing kept"
            self.report.repairs.append(Repair(entry.line, boundary_id, detail))
        if kept_from > 0:
            metadata["compactThroughMessageId"] = self.messages[kept_from - 1].id
        facts = {k: entry.value[k] for k in ("tokensBefore", "fromHook") if k in entry.value}
        if facts:
            metadata["pi"] = facts
        self._emit(entry, boundary_id, "system", "Conversation compacted", metadata)
        summary_metadata = {"runtimeKind": Kind.COMPACT_SUMMARY.value, "summaryForBoundaryId": boundary_id}
        summary_id = f"{entry.key}:summary" if boundary_id == entry.key else entry.key
        self._emit(entry, summary_id, "user", str(summary or ""), summary_metadata)

    def _branch_summary(self, entry: _Entry, message_id: str, value: dict[str, Any]) -> None:
        metadata: dict[str, Any] = {"runtimeKind": Kind.BRANCH_SUMMARY.value}
        if "fromId" in value:
            metadata["pi"] = {"fromId": value["fromId"]}
        self._emit(entry, message_id, "user", str(value.get("summary", "")), metadata)

    def _custom(self, entry: _Entry, message_id: str, value: dict[str, Any]) -> None:
        metadata: dict[str, Any] = {"runtimeKind": Kind.CUSTOM.value, "customType": value.get("customType")}
        if "display" in value:
            metadata["display"] = value["display"]
        if "details" in value and kept_details(
            value["details"], what="details", line=entry.line, message_id=message_id, report=self.report
        ):
            metadata["details"] = value["details"]
        self._emit(entry, message_id, "user", _user_content(value.get("content")), metadata)

    def _switch(self, entry: _Entry, text: str, facts: dict[str, Any]) -> None:
        metadata = {"runtimeKind": Kind.MODEL_SWITCH_NOTE.value, "pi": {"type": entry.type, **facts}}
        self._emit(entry, entry.key, "system", text, metadata)

    def _model(self, provider: Any, model: Any) -> None:
        if isinstance(provider, str) and provider and isinstance(model, str) and model:
            self.model = f"{provider}/{model}"

    def _emit(self, entry: _Entry, message_id: str, role: Role, content: Content, metadata: dict[str, Any]) -> None:
        source = metadata.setdefault("pi", {})
        source["line"] = entry.line
        created = from_iso(entry.value.get("timestamp"))
        if created is None and isinstance(entry.value.get("message"), dict):
            created = from_epoch_ms(entry.value["message"].get("timestamp"))
        self.messages.append(ImportedMessage(message_id, role, content, metadata, created))


def _branch_ids(branch: list[_Entry]) -> tuple[str, ...]:
    ids: list[str] = []
    for entry in branch:
        if entry.type != "label" and entry.type != "session_info":
            ids.append(entry.key)
        if entry.type == "compaction":
            ids.append(f"{entry.key}:summary")
    return tuple(ids)


def _first_kept(value: dict[str, Any]) -> str | None:
    kept = value.get("firstKeptEntryId")
    if isinstance(kept, str):
        return kept
    index = value.get("firstKeptEntryIndex")
    return f"e{index}" if isinstance(index, int) else None


def _is_tree(records: list[Record], header: dict[str, Any]) -> bool:
    """Version 2 and later link entries by id; a file without a version still does if its entries do."""
    version = header.get("version")
    if isinstance(version, int):
        return version >= 2
    return any(isinstance(r.value, dict) and "parentId" in r.value for r in records)


def _user_content(content: Any) -> Content:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif block.get("type") == "image":
            parts.append({"type": "image", "image": str(block.get("data", "")), "mediaType": block.get("mimeType")})
    return parts


def _result_output(content: Any, is_error: bool) -> dict[str, Any]:
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    if isinstance(content, str):
        texts, blocks = [content], []
    if is_error:
        return {"type": "error-text", "value": "\n".join(texts)}
    if all(b.get("type") == "text" for b in blocks) and len(texts) <= 1:
        return {"type": "text", "value": texts[0] if texts else ""}
    items: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text":
            items.append({"type": "text", "text": str(block.get("text", ""))})
        elif block.get("type") == "image":
            media_type = str(block.get("mimeType") or "image/png")
            items.append({"type": "image-data", "data": str(block.get("data", "")), "mediaType": media_type})
    return {"type": "content", "value": items}


def _assistant_parts(content: Any, provider: Any, api: Any) -> Iterator[dict[str, Any]]:
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        match block.get("type"):
            case "text":
                yield {"type": "text", "text": str(block.get("text", ""))}
            case "thinking":
                part: dict[str, Any] = {"type": "reasoning", "text": str(block.get("thinking", ""))}
                options = _thinking_options(block, provider, api)
                if options:
                    part["providerOptions"] = options
                yield part
            case "toolCall":
                call: dict[str, Any] = {
                    "type": "tool-call",
                    "toolCallId": str(block.get("id", "")),
                    "toolName": str(block.get("name", "")),
                    "input": block.get("arguments", {}),
                }
                if isinstance(block.get("thoughtSignature"), str):
                    call["providerOptions"] = {"google": {"thoughtSignature": block["thoughtSignature"]}}
                yield call


def _thinking_options(block: dict[str, Any], provider: Any, api: Any) -> dict[str, Any] | None:
    """pi keeps one opaque ``thinkingSignature``; each provider's replay wants it under its own names."""
    signature = block.get("thinkingSignature")
    if not isinstance(signature, str) or not signature:
        return None
    api_name = api if isinstance(api, str) else ""
    if api_name.startswith("anthropic") or provider == "anthropic":
        key = "redactedData" if block.get("redacted") is True else "signature"
        return {"anthropic": {key: signature}}
    if api_name.startswith("openai"):
        try:
            item = json.loads(signature)
        except ValueError:
            item = None
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            return {"openai": {"itemId": item["id"], "reasoningEncryptedContent": item.get("encrypted_content")}}
    if api_name.startswith("google") or provider == "google":
        return {"google": {"thoughtSignature": signature}}
    return {str(provider or "unknown"): {"signature": signature}}
