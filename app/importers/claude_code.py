"""Claude Code transcripts (``~/.claude/projects/<dir>/<session>.jsonl``, or the same records as one JSON
array, as the widely copied Stop hook writes ``logs/chat.json``) as one session of messages.

Rules, line by line (docs/importing.md gives the whole mapping):
- An API response is written as several ``assistant`` lines sharing ``message.id`` (text on one, each
  ``tool_use`` on the next; newer versions interleave the answers of calls that already ran). They are one
  assistant message with that id, placed at its first line: its parts in order, model and usage from the
  lines, the finish reason from ``stop_reason``.
- A ``user`` line's ``tool_result`` blocks become one tool message (id: the line's ``uuid``); the rest of
  the line (text, images) a user message after it. ``isMeta`` lines (context the model saw, hidden in the
  UI) are kept out of the transcript.
- ``compact_boundary`` and the ``isCompactSummary`` line after it become a ``compact_boundary`` +
  ``compact_summary`` pair; versions that wrote no boundary get one made from the summary's line.
- Hook, API-error and other ``system`` lines and ``attachment`` lines are runtime facts: kept, hidden from
  the model and the transcript (the debug view shows them), except the attachments Claude Code sends to the
  model: a prompt queued while it worked (a user message) and hook context and the skill listing (hidden
  ``<system-reminder>`` user messages), as it sends them. ``local_command`` output is a user message, as
  Claude Code sends it to the model. API error replies (``isApiErrorMessage``) are kept out of the model;
  other ``<synthetic>`` replies are answers Claude Code wrote itself, sent to the model as they are.
- Sidechain lines (a Task subagent's own conversation) are skipped with a reason: they are another agent's
  context, and Claude Code never sends them to the parent's model.
- Lines the conversation left (the user went back and asked again) are reported as branches.
"""

from dataclasses import dataclass, field
from typing import Any

from app.engine.kinds import Kind, Role
from app.engine.persisted import Content
from app.engine.timestamps import from_iso
from app.importers import anthropic_blocks
from app.importers.claude_code_path import Entry, conversation_paths
from app.importers.display_details import kept_details
from app.importers.imported import (
    Branch,
    ImportedMessage,
    ImportedSession,
    ImportReport,
    ImportResult,
    Repair,
    Skipped,
)
from app.importers.options import ImportOptions
from app.importers.pairing import unpaired
from app.importers.reading import Record, read_records, report_of
from app.importers.unexpected import reading_line
from app.importers.untyped import as_list, as_object

FORMAT = "claude-code"
SYNTHETIC_MODEL = "<synthetic>"
CONVERSATION_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})
"""Records that take part in the conversation tree (they carry ``uuid`` and ``parentUuid``)."""
NOT_MESSAGES: dict[str, str] = {
    "file-history-snapshot": "file backup bookkeeping of Claude Code's rewind",
    "queue-operation": "prompt queue bookkeeping (a queued prompt is recorded when it is sent)",
    "last-prompt": "UI state (the last prompt typed)",
    "summary": "a conversation's title (this session's when its leaf is on the conversation's path)",
    "ai-title": "a title for the session",
    "custom-title": "a title for the session",
    "permission-mode": "session setting (kept in the session's metadata)",
}
"""Known records that are not messages, and why they are not imported as messages."""
ENVELOPE = frozenset(
    {
        "parentUuid",
        "logicalParentUuid",
        "isSidechain",
        "userType",
        "cwd",
        "sessionId",
        "version",
        "gitBranch",
        "uuid",
        "timestamp",
        "type",
        "entrypoint",
        "slug",
        "content",
        "message",
        "isMeta",
    }
)
"""Keys every line repeats; a runtime fact's metadata keeps the others."""
HOOKS_THE_MODEL_SEES = ("SessionStart", "UserPromptSubmit")
"""Hook events whose success output Claude Code sends to the model; other hooks' output only shows in its UI."""
TURN_ENDS = frozenset({"stop_hook_summary", "turn_duration"})
"""System lines written when a turn has ended: no more lines of its last answer can follow. (``stop_reason``
cannot tell: some versions write the final one on every line of the answer, others on none.)"""


def parse(data: bytes, options: ImportOptions) -> ImportResult:
    reading = read_records(data)
    report = report_of(FORMAT, reading)
    entries = _entries(reading.records, report)
    options.refuse_invalid(report)
    paths = conversation_paths(entries)
    builder = _Builder(report)
    for entry in paths.conversation:
        with reading_line(report, entry.line):
            builder.add(entry)
    options.refuse_invalid(report)
    for branch in paths.branches:
        report.branches.append(Branch(branch[0].line, len(branch), _branch_ids(branch)))
    if not builder.messages and not entries:
        return ImportResult([], report)
    messages = builder.messages
    report.unanswered_calls, report.orphan_results = unpaired(messages)
    session = ImportedSession(
        id=options.session_id or _session_id(paths.conversation or entries),
        title=_title(reading.records, {entry.uuid for entry in paths.conversation}),
        model=builder.model,
        metadata={"source": FORMAT, "claudeCode": _session_facts(reading.records)},
        messages=messages,
        settled=builder.settled(),
    )
    return ImportResult([session], report)


def _entries(records: list[Record], report: ImportReport) -> list[Entry]:
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for record in records:
        value = record.value
        kind = value.get("type") if isinstance(value, dict) else None
        if not isinstance(value, dict) or not isinstance(kind, str):
            report.invalid.append(Skipped(record.line, "not a Claude Code record (an object with a type)"))
        elif kind in NOT_MESSAGES:
            report.skipped.append(Skipped(record.line, f"{kind}: {NOT_MESSAGES[kind]}"))
        elif kind not in CONVERSATION_TYPES:
            report.invalid.append(Skipped(record.line, f"unknown record type {kind!r}"))
        elif value.get("isSidechain") is True:
            report.skipped.append(Skipped(record.line, "sidechain: a subagent's own conversation"))
        elif not isinstance(value.get("uuid"), str) or not value["uuid"]:
            report.invalid.append(Skipped(record.line, f"{kind} record without a uuid"))
        elif kind in ("user", "assistant") and not isinstance(value.get("message"), dict):
            report.invalid.append(Skipped(record.line, f"{kind} record without a message"))
        elif value["uuid"] in seen:
            report.skipped.append(Skipped(record.line, f"repeats line {seen[value['uuid']]} (same uuid)"))
        else:
            seen[value["uuid"]] = record.line
            entries.append(_entry(record.line, value))
            if kind == "progress":
                report.skipped.append(Skipped(record.line, "progress: UI state of a running tool or hook"))
    return entries


def _entry(line: int, value: dict[str, Any]) -> Entry:
    parent = value.get("parentUuid") or value.get("logicalParentUuid")
    return Entry(line, value["uuid"], parent if isinstance(parent, str) else None, value)


@dataclass(slots=True)
class _Response:
    """The assistant message being assembled from the lines of one API response."""

    message_id: str
    message: ImportedMessage
    parts: list[dict[str, Any]]
    """The message's content, growing line by line."""
    index: int
    closed: bool = False


@dataclass(slots=True)
class _Builder:
    report: ImportReport
    messages: list[ImportedMessage] = field(default_factory=list)
    tool_names: dict[str, str] = field(default_factory=dict)
    used_ids: set[str] = field(default_factory=set)
    response: _Response | None = None
    awaiting_summary: ImportedMessage | None = None
    model: str | None = None

    def settled(self) -> int:
        """An answer still open at the end may get more lines: it and what follows it are not settled."""
        if self.response is not None and not self.response.closed:
            return self.response.index
        return len(self.messages)

    def add(self, entry: Entry) -> None:
        match entry.type:
            case "assistant":
                self._assistant(entry)
            case "user":
                self._user(entry)
            case "system":
                self._system(entry)
            case "attachment":
                seen = _attachment_for_model(as_object(entry.record.get("attachment")))
                if seen is None:
                    self._runtime_fact(entry, _attachment_text(entry.record.get("attachment")))
                else:
                    self._seen_attachment(entry, *seen)

    def _assistant(self, entry: Entry) -> None:
        message = entry.record["message"]
        response_id = entry.message_id or entry.uuid
        notes: list[str] = []
        parts = anthropic_blocks.assistant_parts(message.get("content"), self.tool_names, notes)
        response = self.response
        if response is None or response.closed or response.message_id != response_id:
            self._close_response()
            content: list[dict[str, Any]] = []
            message_id = response_id if response_id not in self.used_ids else entry.uuid
            answer = self._emit(entry, message_id, "assistant", content, {})
            response = self.response = _Response(response_id, answer, content, len(self.messages) - 1)
        response.parts.extend(parts)
        self._describe_answer(response.message, entry)
        self._repairs(entry.line, response.message.id, notes)

    def _describe_answer(self, answer: ImportedMessage, entry: Entry) -> None:
        """Model, usage and finish reason: each line of a response repeats them, the newest counts."""
        message = entry.record["message"]
        metadata = answer.metadata
        model = message.get("model")
        if entry.record.get("isApiErrorMessage") is True:
            metadata.update(finishReason="error", eligibleForModelContext=False)
            metadata.setdefault("claudeCode", {})["isApiErrorMessage"] = True
            return
        if model == SYNTHETIC_MODEL:
            # A reply Claude Code wrote itself ("No response requested." after a local command): it sends it to
            # the model like any answer, but no model produced it.
            return
        if isinstance(model, str) and model:
            metadata.update(provider=anthropic_blocks.ANTHROPIC, model=model)
            self.model = f"{anthropic_blocks.ANTHROPIC}/{model}"
        usage = anthropic_blocks.usage(message.get("usage"))
        if usage is not None:
            metadata["usage"] = usage
        finish = anthropic_blocks.FINISH_REASONS.get(str(message.get("stop_reason")))
        if finish is not None:
            metadata["finishReason"] = finish
        request_id = entry.record.get("requestId")
        if isinstance(request_id, str):
            metadata.setdefault("claudeCode", {})["requestId"] = request_id

    def _user(self, entry: Entry) -> None:
        record = entry.record
        content = record["message"].get("content")
        notes: list[str] = []
        results = anthropic_blocks.tool_results(content, self.tool_names, notes)
        prompt: Content = content if isinstance(content, str) else anthropic_blocks.user_parts(content, notes)
        if results:
            tool = self._emit(entry, entry.uuid, "tool", results, self._tool_use_result(entry))
            self._repairs(entry.line, tool.id, notes)
            notes = []
        if not prompt:
            if not results:
                self.report.skipped.append(Skipped(entry.line, "user line with no content"))
            return
        self._close_response()
        metadata: dict[str, Any] = {}
        if record.get("isMeta") is True:
            metadata["visibleInTranscript"] = False
        if record.get("isCompactSummary") is True:
            self._summary(entry, prompt, metadata)
            return
        user = self._emit(entry, f"{entry.uuid}:prompt" if results else entry.uuid, "user", prompt, metadata)
        self._repairs(entry.line, user.id, notes)

    def _tool_use_result(self, entry: Entry) -> dict[str, Any]:
        if "toolUseResult" not in entry.record:
            return {}
        value = entry.record["toolUseResult"]
        if kept_details(value, what="toolUseResult", line=entry.line, message_id=entry.uuid, report=self.report):
            return {"claudeCode": {"toolUseResult": value}}
        return {}

    def _summary(self, entry: Entry, text: Content, metadata: dict[str, Any]) -> None:
        boundary = self.awaiting_summary
        if boundary is None:
            boundary = self._boundary(entry, f"{entry.uuid}:boundary", "Conversation compacted", {})
            self.report.repairs.append(
                Repair(
                    entry.line,
                    boundary.id,
                    "compact summary without a compact_boundary line (older versions wrote none): boundary made",
                )
            )
        self.awaiting_summary = None
        metadata.update(runtimeKind=Kind.COMPACT_SUMMARY.value, summaryForBoundaryId=boundary.id)
        self._emit(entry, entry.uuid, "user", text, metadata)

    def _system(self, entry: Entry) -> None:
        record = entry.record
        match record.get("subtype"):
            case "compact_boundary":
                compact = as_object(record.get("compactMetadata"))
                facts: dict[str, Any] = {k: compact[k] for k in ("trigger", "preTokens") if k in compact}
                text = record.get("content") if isinstance(record.get("content"), str) else "Conversation compacted"
                self._boundary(entry, entry.uuid, text or "Conversation compacted", facts)
            case "local_command":
                self._close_response()
                self._emit(entry, entry.uuid, "user", str(record.get("content", "")), {})
            case subtype:
                if isinstance(subtype, str) and subtype in TURN_ENDS:
                    self._close_response()
                self._runtime_fact(entry, _system_text(record))

    def _boundary(self, entry: Entry, boundary_id: str, text: str, facts: dict[str, Any]) -> ImportedMessage:
        self._close_response()
        metadata: dict[str, Any] = {"runtimeKind": Kind.COMPACT_BOUNDARY.value}
        if self.messages:
            metadata["compactThroughMessageId"] = self.messages[-1].id
        if facts:
            metadata["claudeCode"] = facts
        boundary = self._emit(entry, boundary_id, "system", text, metadata)
        self.awaiting_summary = boundary
        return boundary

    def _runtime_fact(self, entry: Entry, text: str) -> None:
        """The line's own fields go into the metadata (its text is the content), unless they are large."""
        facts = {k: v for k, v in entry.record.items() if k not in ENVELOPE}
        attachment = facts.get("attachment")
        if isinstance(attachment, dict):
            facts["attachment"] = {k: v for k, v in attachment.items() if k != "content"}
        what = f"fields of the {entry.type} line"
        if not kept_details(facts, what=what, line=entry.line, message_id=entry.uuid, report=self.report):
            facts = {"subtype": facts["subtype"]} if "subtype" in facts else {}
        metadata = {
            "eligibleForModelContext": False,
            "visibleInTranscript": False,
            "claudeCode": {"type": entry.type, **facts},
        }
        self._emit(entry, entry.uuid, "system", text, metadata)

    def _seen_attachment(self, entry: Entry, text: str, shown: bool) -> None:
        """An attachment Claude Code sends to the model, as the user message it sends; the line's fields go
        into the metadata like a runtime fact's."""
        fields = {k: v for k, v in as_object(entry.record.get("attachment")).items() if k != "content"}
        metadata: dict[str, Any] = {"claudeCode": {"type": entry.type, "attachment": fields}}
        if not shown:
            metadata["visibleInTranscript"] = False
        self._emit(entry, entry.uuid, "user", text, metadata)

    def _emit(
        self, entry: Entry, message_id: str, role: Role, content: Content, metadata: dict[str, Any]
    ) -> ImportedMessage:
        source = metadata.setdefault("claudeCode", {})
        source.update(line=entry.line, uuid=entry.uuid)
        message = ImportedMessage(message_id, role, content, metadata, from_iso(entry.record.get("timestamp")))
        self.messages.append(message)
        self.used_ids.add(message_id)
        return message

    def _close_response(self) -> None:
        if self.response is not None:
            self.response.closed = True

    def _repairs(self, line: int, message_id: str, notes: list[str]) -> None:
        self.report.repairs.extend(Repair(line, message_id, note) for note in notes)


def _system_text(record: dict[str, Any]) -> str:
    content = record.get("content")
    if isinstance(content, str) and content:
        return content
    subtype = str(record.get("subtype") or "system")
    match subtype:
        case "api_error":
            cause = record.get("cause") or as_object(record.get("error")).get("cause") or {}
            what = cause.get("code") if isinstance(cause, dict) else None
            return f"API error ({what or 'unknown'}), retry {record.get('retryAttempt')} of {record.get('maxRetries')}"
        case "turn_duration":
            return f"Turn took {record.get('durationMs')} ms"
        case "stop_hook_summary":
            commands = [str(h.get("command")) for h in as_list(record.get("hookInfos")) if isinstance(h, dict)]
            return "Stop hooks ran: " + (", ".join(commands) or "none")
        case _:
            return subtype


def _attachment_for_model(attachment: dict[str, Any]) -> tuple[str, bool] | None:
    """What Claude Code sends the model for an attachment (its ``normalizeAttachmentForAPI``), and whether its
    UI shows it: a prompt queued while the model worked is the user's own words; hook context and the skill
    listing are reminders it hides. ``None`` for an attachment it does not send."""
    name, content = attachment.get("hookName"), attachment.get("content")
    match attachment.get("type"):
        case "queued_command":
            prompt = attachment.get("prompt")
            said = prompt if isinstance(prompt, str) else anthropic_blocks.block_text(prompt)
            ask = "Please address this message and continue with your tasks."
            return _system_reminder(f"The user sent the following message:\n{said}\n\n{ask}"), True
        case "hook_additional_context" if isinstance(content, list) and content:
            context = "\n".join(str(line) for line in content)
            return _system_reminder(f"{name} hook additional context: {context}"), False
        case "hook_success" if attachment.get("hookEvent") in HOOKS_THE_MODEL_SEES and content:
            return _system_reminder(f"{name} hook success: {content}"), False
        case "skill_listing" if isinstance(content, str) and content:
            return _system_reminder(
                f"The following skills are available for use with the Skill tool:\n\n{content}"
            ), False
    return None


def _system_reminder(text: str) -> str:
    return f"<system-reminder>\n{text}\n</system-reminder>"


def _attachment_text(attachment: Any) -> str:
    if not isinstance(attachment, dict):
        return "attachment"
    content = attachment.get("content")
    kind = str(attachment.get("type") or "attachment")
    if isinstance(content, str) and content:
        return content
    if isinstance(content, list) and all(isinstance(item, str) for item in content) and content:
        return "\n".join(content)
    return kind


def _branch_ids(branch: list[Entry]) -> tuple[str, ...]:
    ids: dict[str, None] = {}
    for entry in branch:
        if entry.type in ("user", "assistant"):
            ids.setdefault(entry.message_id if entry.type == "assistant" and entry.message_id else entry.uuid)
    return tuple(ids)


def _session_id(entries: list[Entry]) -> str:
    for entry in reversed(entries):
        session_id = entry.record.get("sessionId")
        if isinstance(session_id, str) and session_id:
            return session_id
    return "claude-code"


def _title(records: list[Record], conversation: set[str]) -> str | None:
    custom = ai = on_path = None
    for record in records:
        value = record.value
        if not isinstance(value, dict):
            continue
        match value.get("type"):
            case "custom-title":
                custom = value.get("customTitle") or custom
            case "ai-title":
                ai = value.get("aiTitle") or ai
            case "summary" if isinstance(value.get("leafUuid"), str) and value["leafUuid"] in conversation:
                on_path = value.get("summary") or on_path
    title = custom or ai or on_path
    return str(title) if title else None


def _session_facts(records: list[Record]) -> dict[str, Any]:
    """The newest working directory, branch, version and permission mode the transcript names."""
    facts: dict[str, Any] = {}
    for record in records:
        value = record.value
        if not isinstance(value, dict) or value.get("isSidechain") is True:
            continue
        for key in ("cwd", "gitBranch", "version", "permissionMode"):
            if isinstance(value.get(key), str) and value[key]:
                facts[key] = value[key]
    return facts
