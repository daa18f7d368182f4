"""What an import produces: sessions of messages in the append shape, and a report of everything left out.

``ImportedMessage.to_append()`` is one element of ``POST /sessions/{id}/messages``'s ``messages``: the
service appends them as they are. The report says what a reader of the source would miss in Projector:
lines skipped (and why), lines that were not understood, branches the session left, changes made so a block
fits a ModelMessage part, and tool calls that never got an answer.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.engine.kinds import Role
from app.engine.persisted import Content
from app.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    id: str
    """Taken from the source, so that importing twice lands on the same message."""
    role: Role
    content: Content
    metadata: dict[str, Any]
    created_at: datetime | None
    run_id: str | None = None

    def to_append(self) -> dict[str, Any]:
        """The message as the append endpoint takes it (camelCase JSON)."""
        out: dict[str, Any] = {"id": self.id, "role": self.role, "content": self.content, "metadata": self.metadata}
        if self.created_at is not None:
            out["createdAt"] = self.created_at.isoformat()
        if self.run_id is not None:
            out["runId"] = self.run_id
        return out


@dataclass(slots=True)
class ImportedSession:
    id: str
    title: str | None
    model: str | dict[str, Any] | None
    """``provider/modelId`` of the newest answer the source names, when it names one (an archive keeps the
    session's as it was written, an opencode reference object too)."""
    metadata: dict[str, Any]
    messages: list[ImportedMessage]
    settled: int
    """How many leading messages no later line of the source can change. A live file may still be writing
    the rest (an answer streamed over several lines), so following a file appends only ``messages[:settled]``
    and reads the others again when the file has grown."""
    context_window_tokens: int | None = None
    as_created: bool = False
    """Its fields are those ``POST /sessions`` took (an archive's), held to that endpoint's checks."""
    runs: list[dict[str, Any]] = field(default_factory=list)
    """Runs as ``GET /sessions/{id}/runs`` answers them (an archive's), created before the messages."""


@dataclass(frozen=True, slots=True)
class Skipped:
    line: int
    """The line of a JSONL file; the element (from 1) of a JSON array; the message (from 1) of a document
    that holds one session, such as an opencode export."""
    reason: str


@dataclass(frozen=True, slots=True)
class Branch:
    """Lines of a conversation the session left (the user went back and asked again): not imported."""

    first_line: int
    lines: int
    message_ids: tuple[str, ...]
    """The ids these lines would have given: a follower that stored them before the session left them knows
    which stored messages are no longer on the conversation's path."""


@dataclass(frozen=True, slots=True)
class Repair:
    line: int
    message_id: str
    detail: str


@dataclass(frozen=True, slots=True)
class ToolCallRef:
    tool_call_id: str
    message_id: str


@dataclass(slots=True)
class ImportReport:
    format: str
    skipped: list[Skipped] = field(default_factory=list)
    """Records understood and deliberately not imported as messages."""
    invalid: list[Skipped] = field(default_factory=list)
    """Lines that are not JSON or not a known record; ``strict`` refuses the import on the first one."""
    branches: list[Branch] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)
    unanswered_calls: list[ToolCallRef] = field(default_factory=list)
    """Tool calls with no result in the session (interrupted, or the session ends while they run)."""
    orphan_results: list[ToolCallRef] = field(default_factory=list)
    """Tool results whose call is not in the session."""


@dataclass(slots=True)
class ImportResult:
    sessions: list[ImportedSession]
    report: ImportReport

    @property
    def message_count(self) -> int:
        return sum(len(session.messages) for session in self.sessions)


class ImportRefused(InvalidInput):
    """The source cannot be imported (or, with ``strict``, holds a line that is not understood)."""

    def __init__(self, line: int | None, reason: str) -> None:
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{reason}", field="body", line=line)
        self.line = line
        self.reason = reason
