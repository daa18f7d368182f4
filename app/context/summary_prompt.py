"""The summariser's request: a transcript rendered as text, a fixed template, and firm instructions.

The history goes in as serialised text inside ``<conversation>``, not as a live chat: a model handed a chat
tends to answer its last message, and a model told to summarise a document does not (pi, opencode). The
system text forbids continuing the task or calling tools; a previous summary is updated, not restarted, so
facts from before the last compaction survive this one. The answer is checked for the template, since an
answer without any of its headings is most likely the model doing the task instead.

Pure: values in, a request body and a cleaned summary out.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from app import lossless_json
from app.projections.types import ProjectedMessage
from app.providers.sendable_text import clean_text

TEMPLATE_HEADINGS: tuple[str, ...] = (
    "Goal",
    "Constraints and preferences",
    "Progress",
    "Key decisions",
    "Relevant files",
    "Next steps",
    "Critical context",
)

TEMPLATE = """## Goal
What the user wants achieved, in one or two sentences.

## Constraints and preferences
Requirements, limits and preferences the user stated.

## Progress
### Done
### In progress
### Blocked

## Key decisions
Choices made and why.

## Relevant files
Paths read, created or changed, each with what matters about it.

## Next steps
What to do next, in order.

## Critical context
Exact values the work depends on: error messages, identifiers, commands, versions, numbers."""

SYSTEM_PROMPT = f"""You write the working summary of an AI agent's session, so that the agent can carry on \
from the summary alone after the history is removed from its context.

You are not a participant in the session. Do not continue the task, do not answer questions asked in it, \
do not call tools and do not write new code. Only summarise what the conversation contains.

Answer with the summary only, in exactly this template (keep every heading; write "(none)" under a heading \
with nothing to say):

{TEMPLATE}

Rules:
- Terse bullet points, no filler.
- Keep exact file paths, function names, commands, error messages and numbers.
- Say what is already done, so that it is not done twice.
- Keep the user's newest request in their own words (shortened only where it is very long): the work may \
stop partway through it.
- Leave out greetings, tool mechanics and environment details that do not matter for the work.
- Do not mention that this is a summary or that the history was compacted."""

_FIRST_SUMMARY = """Summarise the conversation above in the template."""

_UPDATE_SUMMARY = """The conversation above happened after the previous summary. Update that summary: keep \
everything in it that is still true, add what the conversation adds, move finished work to Done, and where \
the two disagree, the conversation wins. Answer with the complete updated summary in the template."""

Transcript = str | Sequence[ProjectedMessage | Mapping[str, Any]]
"""Plain text, the compact view's messages, or ChatMessage-like ``{"role", "content"}`` dicts."""

_HIDDEN_BLOCK = re.compile(r"<(think|thinking|analysis)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_SUMMARY_BLOCK = re.compile(r"<summary>(.*?)</summary>", re.DOTALL | re.IGNORECASE)
_HEADING_NOISE = re.compile(r"^[#*\s\-_]+|[*:\s_]+$")


BLOCK_SEPARATOR = "\n\n"


def render_transcript(transcript: Transcript, *, tool_result_chars: int) -> str:
    """The history as labelled lines, each tool result cut to ``tool_result_chars``."""
    if isinstance(transcript, str):
        return transcript.strip()
    return BLOCK_SEPARATOR.join(_blocks(transcript, tool_result_chars))


def transcript_blocks(transcript: Transcript, *, tool_result_chars: int) -> list[str]:
    """The rendered history's blocks, a message part each (``render_transcript`` joins them)."""
    return [transcript.strip()] if isinstance(transcript, str) else _blocks(transcript, tool_result_chars)


def take_part(blocks: Sequence[str], part_bytes: int) -> tuple[str, int]:
    """The longest run of ``blocks`` from the first that fits in ``part_bytes`` UTF-8 bytes, joined as the
    transcript joins them, and how many blocks it took (at least one): for a summariser whose window cannot
    take the history whole, which summarises it a part at a time. A block longer than a part alone keeps its
    start and end, and says how much of its middle was cut."""
    taken: list[str] = []
    used = 0
    for block in blocks:
        block = _cut_to_bytes(block, part_bytes)
        size = len(block.encode("utf-8", "surrogatepass")) + (len(BLOCK_SEPARATOR) if taken else 0)
        if taken and used + size > part_bytes:
            break
        taken.append(block)
        used += size
    return BLOCK_SEPARATOR.join(taken), len(taken)


def _blocks(transcript: Sequence[ProjectedMessage | Mapping[str, Any]], tool_result_chars: int) -> list[str]:
    blocks: list[str] = []
    for message in transcript:
        role: str
        kind: str | None
        if isinstance(message, ProjectedMessage):
            role, content, kind = message.role, message.content, message.semantic_type.value
        else:
            role, content, kind = str(message.get("role", "user")), message.get("content", ""), None
        blocks.extend(_render_message(role, kind, content, tool_result_chars))
    return [block for block in blocks if block.strip()]


def _cut_to_bytes(block: str, limit: int) -> str:
    """``block`` when it fits in ``limit`` UTF-8 bytes, else its start and end around a note of the cut."""
    if len(block) * 4 <= limit or len(block.encode("utf-8", "surrogatepass")) <= limit:
        return block
    # Characters are at most four bytes: a quarter of what is left each side always fits.
    keep = max((limit - 64) // 8, 0)
    cut = len(block) - 2 * keep
    return f"{block[:keep]}... [{cut} characters cut] ...{block[len(block) - keep :]}"


def build_summary_messages(
    transcript: Transcript,
    *,
    previous_summary: str | None = None,
    instructions: str | None = None,
    tool_result_chars: int = 2_000,
) -> list[dict[str, str]]:
    """The chat messages of the summariser request."""
    parts: list[str] = []
    previous = (previous_summary or "").strip()
    if previous:
        parts.append(f"<previous-summary>\n{previous}\n</previous-summary>")
    conversation = render_transcript(transcript, tool_result_chars=tool_result_chars)
    parts.append(f"<conversation>\n{conversation}\n</conversation>")
    parts.append(_UPDATE_SUMMARY if previous else _FIRST_SUMMARY)
    if instructions and instructions.strip():
        parts.append(f"Additional instructions for this summary:\n{instructions.strip()}")
    # The summariser is an OpenAI-compatible server: stored text is made sendable as for that target.
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": clean_text("\n\n".join(parts), remove_nul=True)},
    ]


def clean_summary(answer: str) -> str:
    """The summary without thinking or analysis blocks (reasoning models on vLLM often inline them)."""
    text = _HIDDEN_BLOCK.sub("", answer)
    # A reasoning model cut off inside its thinking leaves an opening tag and no summary.
    text = re.sub(r"<(think|thinking)>.*\Z", "", text, flags=re.DOTALL | re.IGNORECASE)
    inner = _SUMMARY_BLOCK.search(text)
    return (inner.group(1) if inner else text).strip()


def has_template_heading(summary: str) -> bool:
    wanted = {heading.lower() for heading in TEMPLATE_HEADINGS}
    return any(_HEADING_NOISE.sub("", line).lower() in wanted for line in summary.splitlines())


def _render_message(role: str, kind: str | None, content: Any, limit: int) -> list[str]:
    label = _label(role, kind)
    if isinstance(content, str):
        return [f"[{label}]: {content}"]
    if not isinstance(content, list):
        return [f"[{label}]: {_json(content)}"]
    lines: list[str] = []
    for part in content:
        if isinstance(part, dict):
            lines.append(_render_part(label, part, limit))
    return lines


def _label(role: str, kind: str | None) -> str:
    if kind in {"compact_summary", "handoff_summary", "branch_summary"}:
        return "Earlier summary"
    return {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool"}.get(role, role)


def _render_part(label: str, part: Mapping[str, Any], limit: int) -> str:
    match part.get("type"):
        case "text":
            return f"[{label}]: {part.get('text', '')}"
        case "reasoning":
            return f"[Assistant thinking]: {part.get('text', '')}"
        case "image":
            return f"[{label}]: [image]"
        case "file":
            return f"[{label}]: [file {part.get('filename') or part.get('mediaType', '')}]"
        case "tool-call":
            return f"[Assistant tool call]: {part.get('toolName', '')}({_json(part.get('input'))})"
        case "tool-result":
            output = part.get("output")
            kind = output.get("type") if isinstance(output, dict) else None
            title = "Tool error" if kind in {"error-text", "error-json", "execution-denied"} else "Tool result"
            return f"[{title}] {part.get('toolName', '')}: {_cut(_output_text(output), limit)}"
        case "tool-approval-request":
            return f"[Assistant asked approval]: call {part.get('toolCallId', '')}"
        case "tool-approval-response":
            verdict = "approved" if part.get("approved") else "denied"
            reason = f" ({part['reason']})" if part.get("reason") else ""
            return f"[Tool approval]: {verdict}{reason}"
        case _:
            return f"[{label}]: {_cut(_json(part), limit)}"


def _output_text(output: Any) -> str:
    if not isinstance(output, dict):
        return _json(output)
    value = output.get("value")
    match output.get("type"):
        case "execution-denied":
            reason = output.get("reason")
            return f"execution denied ({reason})" if reason else "execution denied"
        case "content" if isinstance(value, list):
            return " ".join(_content_item_text(item) for item in value)
        case _:
            return value if isinstance(value, str) else _json(value)


def _content_item_text(item: Any) -> str:
    if not isinstance(item, dict):
        return _json(item)
    if item.get("type") == "text":
        return str(item.get("text", ""))
    media_type = str(item.get("mediaType", ""))
    return "[image]" if media_type.startswith("image/") or "image" in str(item.get("type")) else "[file]"


def _cut(text: str, limit: int) -> str:
    if limit <= 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut]"


def _json(value: Any) -> str:
    return lossless_json.dumps(value).decode()
