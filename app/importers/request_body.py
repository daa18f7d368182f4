"""A provider request body (``{system?, messages, model?}``) or a bare ``messages`` array: what the three
request formats (``openai-chat``, ``anthropic-messages``, ``ai-sdk``) read, for users moving a hand-rolled
store of chat histories into Projector.

A request names no session and no message ids, so both come from the body's shape: message ``n`` (from 1) is
``m<n>`` and the request's own ``system`` is ``system``; the session is ``<format>-`` and a digest of the
request's opening, unless the caller names it: its ``system``, the system messages it opens with and the
first message after them. A conversation that grew keeps its opening, so importing it again lands in the
same session and appends only the new messages; two histories that open with the same system text and the
same first message would share a session, so callers that can should name it.
"""

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.importers.imported import ImportedMessage, ImportedSession, ImportRefused, ImportReport, ImportResult
from app.importers.options import ImportOptions
from app.importers.pairing import unpaired
from app.importers.reading import read_json_document

SYSTEM_ID = "system"
SYSTEM_ROLES = ("system", "developer")


@dataclass(frozen=True, slots=True)
class RequestBody:
    system: Any
    messages: list[Any]
    model: str | None


def read_request(data: bytes) -> RequestBody:
    document = read_json_document(data)
    if isinstance(document, list):
        return RequestBody(None, document, None)
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        model = document.get("model")
        return RequestBody(document.get("system"), document["messages"], model if isinstance(model, str) else None)
    raise ImportRefused(None, "a request body with a messages array, or a messages array, was expected")


def plain_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def message_id(number: int) -> str:
    return f"m{number}"


def session_id(format: str, body: RequestBody, options: ImportOptions) -> str:
    if options.session_id is not None:
        return options.session_id
    opening = json.dumps([body.system, opening_messages(body.messages)], sort_keys=True, separators=(",", ":"))
    return f"{format}-{hashlib.sha256(opening.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"


def opening_messages(messages: list[Any]) -> list[Any]:
    """The system messages a conversation opens with and the first message after them: what tells one
    conversation of an app from another, when all of them open with the same system prompt. A body whose
    first message is no system message opens with that message alone, as sessions were always named."""
    for index, message in enumerate(messages):
        if not (isinstance(message, dict) and message.get("role") in SYSTEM_ROLES):
            return messages[: index + 1]
    return messages


@dataclass(slots=True)
class RequestImport:
    """One request body being read into a session: its messages, its report, and how it ends."""

    format: str
    body: RequestBody
    options: ImportOptions
    report: ImportReport
    messages: list[ImportedMessage]

    @classmethod
    def start(
        cls, format: str, data: bytes, options: ImportOptions, system_text: Callable[[Any], str] = plain_text
    ) -> "RequestImport":
        """``system_text`` reads the request's own ``system`` the way the format writes it."""
        body = read_request(data)
        system = system_text(body.system)
        messages = [ImportedMessage(SYSTEM_ID, "system", system, {}, None)] if system else []
        return cls(format, body, options, ImportReport(format), messages)

    def finish(self, model: str | None) -> ImportResult:
        self.options.refuse_invalid(self.report)
        self.report.unanswered_calls, self.report.orphan_results = unpaired(self.messages)
        session = ImportedSession(
            id=session_id(self.format, self.body, self.options),
            title=None,
            model=model,
            metadata={"source": self.format},
            messages=self.messages,
            settled=len(self.messages),
        )
        return ImportResult([session], self.report)
