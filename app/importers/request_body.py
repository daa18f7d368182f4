"""A provider request body (``{system?, messages, model?}``) or a bare ``messages`` array: what the three
request formats (``openai-chat``, ``anthropic-messages``, ``ai-sdk``) read, for users moving a hand-rolled
store of chat histories into Projector.

A request names no session and no message ids, so both come from the body's shape: message ``n`` (from 1) is
``m<n>`` and the request's own ``system`` is ``system``; the session is ``<format>-`` and a digest of the
system text and the first message, unless the caller names it. A conversation that grew keeps its first
message, so importing it again lands in the same session and appends only the new messages; two histories
that open with the same system text and the same first message would share a session, so callers that can
should name it.
"""

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from app.importers.imported import ImportRefused
from app.importers.options import ImportOptions
from app.importers.reading import read_json_document

SYSTEM_ID = "system"


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


def message_id(number: int) -> str:
    return f"m{number}"


def session_id(format: str, body: RequestBody, options: ImportOptions) -> str:
    if options.session_id is not None:
        return options.session_id
    opening = json.dumps([body.system, body.messages[:1]], sort_keys=True, separators=(",", ":"))
    return f"{format}-{hashlib.sha256(opening.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"
