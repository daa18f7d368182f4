"""A large append body read one message at a time: ``{"messages": [...]}`` is decoded message by message and
each message is validated on its own, so the parts budget refuses a body after the first message past it
(never decoding the rest), and no single call into C (which holds the interpreter lock, stalling the event
loop even from a worker thread) runs longer than one message takes.

Decoding is Python's own JSON reader, as FastAPI's is (an unpaired surrogate escape and NaN decode the same
way, and are refused the same way later); a body of any other shape is read whole, as FastAPI reads it.
"""

import json
import re
from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from app.api.schemas import AppendMessagesRequest, MessageIn
from app.api.wire import WireModel
from app.errors import TooLarge
from app.settings import Settings

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class _OneMessage(WireModel):
    """One message validated as it is inside a request: the wire configuration (NaN refused in metadata too)
    reaches nested JSON values only from an enclosing model."""

    message: MessageIn


class _NotABatch(Exception):
    """The body is JSON of another shape than one ``messages`` key holding a non-empty list."""


def read_batch(body: bytes, settings: Settings) -> AppendMessagesRequest | None:
    """The validated request, or None when the body is not ``{"messages": [...]}`` (the caller reads it whole).
    Raises what FastAPI would for bad JSON or invalid messages, and ``TooLarge`` past the parts budget."""
    text = body.decode(json.detect_encoding(body), "surrogatepass")
    try:
        messages = _messages_of(text, settings)
    except _NotABatch:
        return None
    except json.JSONDecodeError as error:
        raise not_json(error) from None
    except RecursionError:
        raise too_deep() from None
    validated, errors = [], []
    for index, message in enumerate(messages):
        try:
            validated.append(_OneMessage.model_validate({"message": message}).message)
        except ValidationError as error:
            prefix = ("body", "messages", index)
            errors += [{**item, "loc": (*prefix, *item["loc"][1:])} for item in error.errors(include_url=False)]
    if errors:
        raise RequestValidationError(errors, body={"messages": messages})
    return AppendMessagesRequest.model_construct(messages=validated)


def not_json(error: json.JSONDecodeError) -> RequestValidationError:
    """The error FastAPI raises for a body that is not JSON."""
    invalid = {"type": "json_invalid", "loc": ("body", error.pos), "msg": "JSON decode error", "input": {}}
    return RequestValidationError([{**invalid, "ctx": {"error": error.msg}}], body=error.doc)


def too_deep() -> RequestValidationError:
    """The error for a body nested past what Python's JSON reader follows (it raises ``RecursionError``): far
    past any stored value's limit, so it is refused before its fields are known."""
    error = {"type": "json_invalid", "loc": ("body",), "msg": "JSON nested too deep to read", "input": {}}
    return RequestValidationError([{**error, "ctx": {"error": "nested too deep"}}])


def _messages_of(text: str, settings: Settings) -> list[Any]:
    index = _space(text, 0)
    _expect(text, index, "{")
    index = _space(text, index + 1)
    if text.startswith('"messages"', index):
        _, index = _DECODER.raw_decode(text, index)
        index = _space(text, index)
        _expect(text, index, ":")
        index = _space(text, index + 1)
        if text.startswith("[", index):
            messages, index = _items(text, _space(text, index + 1), settings)
            index = _space(text, index)
            if text.startswith("}", index) and messages and _space(text, index + 1) == len(text):
                return messages
    raise _NotABatch


def _items(text: str, index: int, settings: Settings) -> tuple[list[Any], int]:
    items: list[Any] = []
    parts = 0
    if text.startswith("]", index):
        return items, index + 1
    while True:
        item, index = _DECODER.raw_decode(text, index)
        items.append(item)
        if isinstance(item, dict) and isinstance(content := item.get("content"), list):
            parts += len(content)
            if parts > settings.max_request_parts:
                raise TooLarge(
                    f"messages: more than {settings.max_request_parts} content parts in one request, the limit",
                    field="messages",
                )
        index = _space(text, index)
        if text.startswith(",", index):
            index = _space(text, index + 1)
        elif text.startswith("]", index):
            return items, index + 1
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, index)


def _space(text: str, index: int) -> int:
    match = _SPACE.match(text, index)
    return match.end() if match else index


def _expect(text: str, index: int, character: str) -> None:
    if not text.startswith(character, index):
        raise _NotABatch
