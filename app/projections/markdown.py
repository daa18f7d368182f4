"""Rendering an export projection to one Markdown document, whole or page by page.

Headings name the speaker, tool calls and results are fenced, media is named rather than embedded. The
renderer reads only the projection (already filtered and, when asked, redacted), so it can never leak what
the export left out. Pure: returns a string, writes nothing.
"""

import json
import re
from typing import Any, assert_never

import orjson

from app.engine.kinds import Kind
from app.projections.framing import fence_for
from app.projections.redaction import redact_text
from app.projections.types import ProjectedMessage, Projection

_SURROGATE = re.compile("[\ud800-\udfff]")
HEADINGS: dict[str, str] = {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool"}


def render_markdown(projection: Projection, *, title: str | None = None, redact: bool = False) -> str:
    return "\n\n".join([*title_block(title, redact=redact), *markdown_blocks(projection)]) + "\n"


def title_block(title: str | None, *, redact: bool) -> list[str]:
    """The document's heading, when the session has a title; redacted with the export, as a title may name a
    secret as well as a message does (the projection's messages are redacted already, the title is not in it)."""
    if not title:
        return []
    return [utf8_text(f"# {redact_text(title) if redact else title}")]


def markdown_blocks(projection: Projection) -> list[str]:
    """One block per message that shows something (a heading and its body), for a document written whole
    or page by page (blocks are separated by a blank line)."""
    blocks = []
    for message in projection.messages:
        body = _body(message)
        if body:
            blocks.append(utf8_text(f"## {_heading(message)}\n\n{body}"))
    return blocks


def utf8_text(text: str) -> str:
    """A Markdown document is UTF-8 text, which cannot hold an unpaired UTF-16 surrogate (stored text may):
    each becomes U+FFFD, the character that says something undecodable was there."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def continuation_note(next_page: str) -> str:
    """Closes a page that is not the end of the conversation, so that a reader of the file sees it too."""
    return f"---\n\n*The conversation continues: [next page]({next_page}).*"


def _heading(message: ProjectedMessage) -> str:
    match message.semantic_type:
        case Kind.BASH_EXECUTION:
            return "User ran a command"
        case Kind.HANDOFF_SUMMARY:
            return "Handoff summary"
        case Kind.BRANCH_SUMMARY:
            return "Branch summary"
        case Kind.COMPACT_SUMMARY:
            return "Compaction summary"
        case Kind.COMPACT_BOUNDARY:
            return "Compaction"
        case Kind.RUNTIME_REMINDER:
            return "Reminder"
        case Kind.AGENT_SWITCH_NOTE:
            return "Agent switch"
        case Kind.MODEL_SWITCH_NOTE:
            return "Model switch"
        case Kind.CUSTOM:
            custom_type = message.metadata.extra.get("customType")
            return f"Extension message ({custom_type})" if custom_type else "Extension message"
        case (
            Kind.SYSTEM_NOTE
            | Kind.USER_INPUT
            | Kind.ASSISTANT_TEXT
            | Kind.ASSISTANT_REASONING
            | Kind.TOOL_CALL
            | Kind.TOOL_RESULT
            | Kind.TOOL_APPROVAL_REQUEST
            | Kind.TOOL_APPROVAL_RESPONSE
        ):
            return HEADINGS[message.role]
        case _:
            assert_never(message.semantic_type)


def _body(message: ProjectedMessage) -> str:
    if message.semantic_type is Kind.BASH_EXECUTION:
        return _bash(message.metadata.extra, message.content)
    if isinstance(message.content, str):
        return message.content.strip()
    return "\n\n".join(filter(None, (_part(part) for part in message.content)))


def _part(part: dict[str, Any]) -> str:
    match part.get("type"):
        case "text":
            return str(part.get("text", "")).strip()
        case "reasoning":
            text = str(part.get("text", "")).strip()
            return "\n".join(f"> {line}" for line in f"*Thinking:* {text}".splitlines()) if text else ""
        case "image" | "file":
            name = part.get("filename") or part.get("mediaType") or part["type"]
            return f"*[{part['type']}: {name}]*"
        case "tool-call":
            heading = f"**Tool call** `{part.get('toolName')}` ({part.get('toolCallId')})"
            return f"{heading}\n\n{_fenced(_json(part.get('input')), 'json')}"
        case "tool-result":
            heading = f"**Tool result** `{part.get('toolName', '')}` ({part.get('toolCallId')})"
            return f"{heading}\n\n{_output(part.get('output'))}"
        case "tool-approval-request":
            return f"*Approval requested for tool call {part.get('toolCallId')}*"
        case "tool-approval-response":
            verdict = "approved" if part.get("approved") else "denied"
            reason = f": {part['reason']}" if part.get("reason") else ""
            return f"*Tool call {verdict}{reason}*"
        case _:
            return _fenced(_json(part), "json")


def _output(output: Any) -> str:
    if not isinstance(output, dict):
        return _fenced(_json(output), "json")
    value = output.get("value")
    match output.get("type"):
        case "text":
            return _fenced(str(value or ""), "")
        case "error-text":
            return "Error:\n\n" + _fenced(str(value or ""), "")
        case "json":
            return _fenced(_json(value), "json")
        case "error-json":
            return "Error:\n\n" + _fenced(_json(value), "json")
        case "execution-denied":
            reason = output.get("reason")
            return f"*Execution denied{': ' + reason if reason else ''}*"
        case "content":
            items = value if isinstance(value, list) else []
            rendered = []
            for item in items:
                if isinstance(item, dict) and item.get("type") == "text":
                    rendered.append(_fenced(str(item.get("text", "")), ""))
                elif isinstance(item, dict):
                    rendered.append(f"*[{item.get('type')}: {item.get('mediaType', 'media')}]*")
            return "\n\n".join(rendered)
        case _:
            return _fenced(_json(output), "json")


def _bash(facts: dict[str, Any], content: Any) -> str:
    command = facts.get("command") if isinstance(facts.get("command"), str) else str(content)
    lines = [_fenced(f"$ {command}", "sh")]
    output = facts.get("output")
    if isinstance(output, str) and output.strip():
        lines.append(_fenced(output.rstrip(), ""))
    if facts.get("cancelled") is True:
        lines.append("*(command cancelled)*")
    elif isinstance(facts.get("exitCode"), int) and facts["exitCode"] != 0:
        lines.append(f"*Exit code {facts['exitCode']}*")
    return "\n\n".join(lines)


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:
        # An unpaired surrogate, which orjson refuses; the document replaces it.
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def _fenced(text: str, language: str) -> str:
    fence = fence_for(text)
    return f"{fence}{language}\n{text}\n{fence}"
