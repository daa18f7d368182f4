"""An Anthropic Messages request (``system`` plus ``messages``, or the bare array) as one session.

The blocks read as in a Claude Code transcript (``anthropic_blocks``): a user message's ``tool_result``
blocks become a tool message (id ``m<n>``) and its other blocks a user message after it (``m<n>:prompt``
when both are there); thinking keeps its signature, redacted thinking its data; server tools
(``server_tool_use`` and their ``*_tool_result`` blocks) stay in the assistant message as provider-executed
calls and results. Assistant messages name their provider (``anthropic``), which is what lets a payload
for Anthropic replay those server tools in their own blocks; the model is the request's, when it names one.
"""

from typing import Any

from app.importers import anthropic_blocks
from app.importers.imported import ImportedMessage, ImportResult, Repair, Skipped
from app.importers.options import ImportOptions
from app.importers.request_body import RequestImport, message_id
from app.importers.unexpected import reading_line

FORMAT = "anthropic-messages"


def parse(data: bytes, options: ImportOptions) -> ImportResult:
    reading = RequestImport.start(FORMAT, data, options, anthropic_blocks.block_text)
    messages, report = reading.messages, reading.report
    tool_names: dict[str, str] = {}
    model = reading.body.model
    producer = {"provider": anthropic_blocks.ANTHROPIC, **({"model": model} if model else {})}
    for number, raw in enumerate(reading.body.messages, start=1):
        with reading_line(report, number):
            role = raw.get("role") if isinstance(raw, dict) else None
            mid = message_id(number)
            notes: list[str] = []
            match role:
                case "assistant":
                    parts = anthropic_blocks.assistant_parts(raw.get("content"), tool_names, notes)
                    messages.append(ImportedMessage(mid, "assistant", parts, producer, None))
                case "user":
                    messages.extend(_user(mid, raw.get("content"), tool_names, notes))
                case _:
                    report.invalid.append(Skipped(number, f"not a Messages API message (role {role!r})"))
            report.repairs.extend(Repair(number, mid, note) for note in notes)
    return reading.finish(f"{anthropic_blocks.ANTHROPIC}/{model}" if model else None)


def _user(mid: str, content: Any, tool_names: dict[str, str], notes: list[str]) -> list[ImportedMessage]:
    out: list[ImportedMessage] = []
    results = anthropic_blocks.tool_results(content, tool_names, notes)
    if results:
        out.append(ImportedMessage(mid, "tool", results, {}, None))
    prompt = content if isinstance(content, str) else anthropic_blocks.user_parts(content, notes)
    if prompt or not results:
        out.append(ImportedMessage(f"{mid}:prompt" if results else mid, "user", prompt, {}, None))
    return out
