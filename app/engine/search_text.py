"""What search and analytics read of a message, worked out once from its parts at write time.

Search matches words in the message's text, its reasoning, its tool calls' names and inputs and its tool
results' outputs; analytics counts tool calls by tool and the results that report an error. Both read these
facts from their own columns, never from the stored content, so no query parses content and the content's
storage format is free to change.

The searchable text is for PostgreSQL ``text``: NUL characters (which it cannot hold) become spaces, lone
UTF-16 surrogates are dropped (and the two private-use characters snippets mark highlights with), and only
the first ``SEARCH_TEXT_MAX_CHARS`` characters are kept, since a ``tsvector`` holds at most 1 MB and a
highlighted snippet re-reads the whole text. Pure: no I/O.
"""

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from app.engine.kinds import Kind
from app.engine.persisted import Content

SEARCH_TEXT_MAX_CHARS = 100_000
"""Enough for every text a person reads in a session; a multi-megabyte tool output is searched by its start."""

ERROR_OUTPUT_TYPES = frozenset({"error-text", "error-json"})
_UNSEARCHABLE = re.compile("[\ud800-\udfff\ue000\ue001]")
"""Lone surrogates (``text`` cannot hold them) and the two private-use characters a snippet's highlights are
marked with, so stored text can never fake a highlight."""
_TEXT_ITEM_TYPES = frozenset({"text"})


@dataclass(frozen=True, slots=True)
class MessageFacts:
    """The columns search and analytics read, derived from one message."""

    search_text: str
    tool_calls: tuple[str, ...]
    """The tool name of each tool-call part, in order (a tool called twice is listed twice)."""
    tool_results: tuple[str, ...]
    """The tool name of each tool-result part."""
    tool_errors: tuple[str, ...]
    """The tool name of each tool-result part whose output is an error."""


def message_facts(kind: Kind, content: Content, metadata: Mapping[str, Any]) -> MessageFacts:
    calls: list[str] = []
    results: list[str] = []
    errors: list[str] = []
    pieces: list[str] = []
    if isinstance(content, str):
        pieces.append(content)
    else:
        for part in content:
            pieces.extend(_part_text(part))
            name = part.get("toolName")
            if not isinstance(name, str):
                continue
            name = storable_text(name)
            if part.get("type") == "tool-call":
                calls.append(name)
            elif part.get("type") == "tool-result":
                results.append(name)
                output = part.get("output")
                if isinstance(output, dict) and output.get("type") in ERROR_OUTPUT_TYPES:
                    errors.append(name)
    if kind is Kind.BASH_EXECUTION and isinstance(metadata.get("output"), str):
        pieces.append(metadata["output"])
    return MessageFacts(searchable(storable_text("\n".join(pieces))), tuple(calls), tuple(results), tuple(errors))


TAG_BREAK = "<\u200b"
"""``<`` and a zero-width space: what every ``<`` of searchable text becomes (``searchable``)."""


def searchable(text: str) -> str:
    """Text as PostgreSQL's search parser should read it, word by word. The parser takes ``<div class="x">``
    for an HTML tag and drops it, and drops all of a ``<script>`` element and what follows it, which in code,
    prompts and tool output is text someone searches for. A zero-width space after each ``<`` makes it text
    again and shows nothing in a snippet; ``as_written`` takes it out. Used on stored text and on queries."""
    return text.replace("<", TAG_BREAK)


def as_written(text: str) -> str:
    """Searchable text (a snippet) as it was written."""
    return text.replace(TAG_BREAK, "<")


def storable_text(text: str) -> str:
    """``text`` as PostgreSQL ``text`` holds it, cut to the searchable length."""
    kept = text[:SEARCH_TEXT_MAX_CHARS].replace("\x00", " ")
    return _UNSEARCHABLE.sub("", kept)


def _part_text(part: Mapping[str, Any]) -> Iterator[str]:
    match part.get("type"):
        case "text" | "reasoning":
            yield from _strings(part.get("text"))
        case "tool-call":
            yield from _strings(part.get("toolName"))
            yield from _json_text(part.get("input"))
        case "tool-result":
            yield from _strings(part.get("toolName"))
            yield from _output_text(part.get("output"))
        case "file":
            yield from _strings(part.get("filename"))
        case _:
            yield from _strings(part.get("text"))


def _output_text(output: Any) -> Iterator[str]:
    if not isinstance(output, dict):
        return
    value = output.get("value")
    if output.get("type") == "content" and isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and item.get("type") in _TEXT_ITEM_TYPES:
                yield from _strings(item.get("text"))
        return
    yield from _json_text(value)


def _json_text(value: Any) -> Iterator[str]:
    """A JSON value's keys and scalar values, one a line: words a person would search for, without the
    quotes and escapes of JSON text (an escaped newline would glue two words together)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list):
                yield str(key)
                yield from _json_text(item)
            elif item is not None:
                yield f"{key}: {item}"
    elif isinstance(value, list):
        for item in value:
            yield from _json_text(item)
    elif value is not None:
        yield str(value)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str) and value:
        yield value
