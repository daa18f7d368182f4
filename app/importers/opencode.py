"""``opencode export <session>`` output (``{info, messages: [{info, parts}]}``) as one session of messages.

opencode keeps an assistant turn as one message of parts that spans several model steps (``step-start`` ...
``step-finish``), each step's tool calls answered inside the same message by the tool part's ``state``. The
AI SDK shape needs each step as an assistant message followed by a tool message of its results, as
opencode's own conversion sends it: the first step keeps the message id, later steps take the id of their
``step-start`` part, and a step's tool message the id of its first tool part. Each step carries the usage
and finish reason of its ``step-finish`` part.

- User text parts (``synthetic`` ones too, which hold what opencode read for the user) and file parts.
  ``text/plain`` and directory files are skipped: opencode sends their contents as synthetic text parts.
- A user message with a ``compaction`` part is the ``compact_boundary``; the assistant that answers it with
  ``summary: true`` is its ``compact_summary``. ``tail_start_id`` (a kept tail) names the first message
  kept verbatim, so the boundary names the message before it.
- A tool's ``completed`` state is its result (attachments as content items; ``time.compacted`` as the
  message's ``compactedAt``; a tool the provider ran keeps its result in the assistant message, beside the
  call, as the AI SDK writes it), ``error`` an error result (the partial output of an interrupted command as
  text, as opencode sends it); ``pending`` and ``running`` tools never finished and are reported unanswered.
- ``snapshot``, ``patch``, ``agent``, ``subtask`` and ``retry`` parts are opencode's own bookkeeping: skipped
  and reported.
"""

from dataclasses import dataclass, field
from typing import Any

from app.engine.kinds import Kind
from app.engine.timestamps import from_epoch_ms, iso_from_epoch_ms
from app.importers.imported import (
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
from app.importers.reading import read_json_document
from app.importers.unexpected import reading_line
from app.importers.untyped import as_list, as_object

FORMAT = "opencode"
INLINED_FILES = frozenset({"text/plain", "application/x-directory"})
BOOKKEEPING_PARTS = frozenset({"snapshot", "patch", "agent", "subtask", "retry"})


def parse(data: bytes, options: ImportOptions) -> ImportResult:
    document = read_json_document(data)
    if not (isinstance(document, dict) and isinstance(document.get("info"), dict)):
        raise ImportRefused(None, "not an opencode export: an object with info and messages was expected")
    info = document["info"]
    raw_messages = document.get("messages")
    if not isinstance(info.get("id"), str) or not isinstance(raw_messages, list):
        raise ImportRefused(None, "not an opencode export: info.id and a messages list are required")
    report = ImportReport(FORMAT)
    builder = _Builder(report)
    for number, raw in enumerate(raw_messages, start=1):
        if not (isinstance(raw, dict) and isinstance(raw.get("info"), dict) and isinstance(raw.get("parts"), list)):
            report.invalid.append(Skipped(number, "not an opencode message (info and parts)"))
            continue
        role = raw["info"].get("role")
        if role not in ("user", "assistant") or not isinstance(raw["info"].get("id"), str):
            report.invalid.append(Skipped(number, f"message of unknown role {role!r} or without an id"))
            continue
        with reading_line(report, number):
            builder.add(number, raw["info"], [p for p in raw["parts"] if isinstance(p, dict)])
    options.refuse_invalid(report)
    report.unanswered_calls, report.orphan_results = unpaired(builder.messages)
    session = ImportedSession(
        id=options.session_id or info["id"],
        title=info.get("title") if isinstance(info.get("title"), str) else None,
        model=builder.model,
        metadata={"source": FORMAT, "opencode": _session_facts(info)},
        messages=builder.messages,
        settled=builder.settled,
    )
    return ImportResult([session], report)


@dataclass(slots=True)
class _Builder:
    report: ImportReport
    messages: list[ImportedMessage] = field(default_factory=list)
    boundaries: dict[str, str] = field(default_factory=dict)
    """The boundary id of each compaction request (a user message id)."""
    first_message: dict[str, int] = field(default_factory=dict)
    """Where each opencode message's first imported message is: a kept tail starts there."""
    model: str | None = None
    settled: int = 0

    def add(self, number: int, info: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        self.first_message[info["id"]] = len(self.messages)
        if info["role"] == "user":
            self._user(number, info, parts)
        else:
            self._assistant(number, info, parts)
        finished = info["role"] == "user" or "completed" in as_object(info.get("time")) or info.get("error")
        if finished and self.settled == self.first_message[info["id"]]:
            self.settled = len(self.messages)

    def _user(self, number: int, info: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        created = from_epoch_ms(as_object(info.get("time")).get("created"))
        metadata: dict[str, Any] = {"opencode": _message_facts(info)}
        compaction = next((p for p in parts if p.get("type") == "compaction"), None)
        if compaction is not None:
            metadata["runtimeKind"] = Kind.COMPACT_BOUNDARY.value
            tail = compaction.get("tail_start_id")
            kept_from = (
                self.first_message.get(tail, len(self.messages)) if isinstance(tail, str) else len(self.messages)
            )
            if kept_from > 0:
                metadata["compactThroughMessageId"] = self.messages[kept_from - 1].id
            metadata["opencode"].update(auto=compaction.get("auto"), overflow=compaction.get("overflow"))
            self.boundaries[info["id"]] = info["id"]
            self.messages.append(ImportedMessage(info["id"], "system", "Conversation compacted", metadata, created))
            return
        content: list[dict[str, Any]] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                if part.get("ignored") is True:
                    self._skip(number, part, "text the user marked ignored (opencode never sends it)")
                    continue
                content.append({"type": "text", "text": str(part.get("text", ""))})
            elif kind == "file":
                file_part = self._file(number, part)
                if file_part is not None:
                    content.append(file_part)
            else:
                bookkeeping = isinstance(kind, str) and kind in BOOKKEEPING_PARTS
                self._skip(number, part, "opencode bookkeeping" if bookkeeping else "unknown user part")
        self.messages.append(ImportedMessage(info["id"], "user", content, metadata, created))

    def _file(self, number: int, part: dict[str, Any]) -> dict[str, Any] | None:
        mime, url = str(part.get("mime", "")), str(part.get("url", ""))
        if mime in INLINED_FILES:
            self._skip(number, part, f"{mime} file (opencode sends its contents as text parts)")
            return None
        if not url.startswith(("data:", "http:", "https:")):
            self._skip(number, part, "file outside the export (only its local path is known)")
            return None
        if mime.startswith("image/"):
            return {"type": "image", "image": url, "mediaType": mime}
        file_part: dict[str, Any] = {"type": "file", "data": url, "mediaType": mime}
        if isinstance(part.get("filename"), str):
            file_part["filename"] = part["filename"]
        return file_part

    def _assistant(self, number: int, info: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        provider, model = info.get("providerID"), info.get("modelID")
        if isinstance(provider, str) and isinstance(model, str):
            self.model = f"{provider}/{model}"
        steps = _steps(info["id"], parts)
        for index, (step_id, step_parts) in enumerate(steps):
            self._step(number, info, step_id, step_parts, last=index == len(steps) - 1)

    def _step(
        self, number: int, info: dict[str, Any], step_id: str, parts: list[dict[str, Any]], *, last: bool
    ) -> None:
        created = from_epoch_ms(as_object(info.get("time")).get("created"))
        content: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        compacted: str | None = None
        finish: dict[str, Any] | None = None
        for part in parts:
            match part.get("type"):
                case "text":
                    content.append(_with_options({"type": "text", "text": str(part.get("text", ""))}, part))
                case "reasoning":
                    content.append(_with_options({"type": "reasoning", "text": str(part.get("text", ""))}, part))
                case "tool":
                    call, result, when = self._tool(number, part)
                    content.append(call)
                    if result is not None and call.get("providerExecuted"):
                        content.append({**result, "providerExecuted": True})  # the provider answered in the turn
                    elif result is not None:
                        results.append(result)
                    compacted = compacted or when
                case "step-finish":
                    finish = part
                case "step-start" | "compaction":
                    continue
                case kind:
                    bookkeeping = isinstance(kind, str) and kind in BOOKKEEPING_PARTS
                    reason = "opencode bookkeeping" if bookkeeping else "unknown assistant part"
                    self._skip(number, part, reason)
        metadata = self._answer_metadata(info, finish, last=last)
        if info.get("summary") is True:
            self._summary(number, step_id, info, content)
        else:
            self.messages.append(ImportedMessage(step_id, "assistant", content, metadata, created))
        if results:
            tool_metadata: dict[str, Any] = {"opencode": {"messageID": info["id"]}}
            if compacted is not None:
                tool_metadata["compactedAt"] = compacted
            tool_id = str(next(p.get("id") for p in parts if p.get("type") == "tool"))
            self.messages.append(ImportedMessage(tool_id, "tool", results, tool_metadata, created))

    def _tool(self, number: int, part: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, str | None]:
        state = as_object(part.get("state"))
        call_id, name = str(part.get("callID", "")), str(part.get("tool", "")) or "unknown"
        call: dict[str, Any] = {"type": "tool-call", "toolCallId": call_id, "toolName": name}
        call["input"] = state.get("input", {})
        metadata = as_object(part.get("metadata"))
        if metadata.get("providerExecuted") is True:
            call["providerExecuted"] = True
        options = {key: value for key, value in metadata.items() if key != "providerExecuted"}
        if options and all(isinstance(value, dict) for value in options.values()):
            # The provider's metadata of the call (a Gemini thoughtSignature): opencode replays it with the call.
            call["providerOptions"] = options
        result: dict[str, Any] = {"type": "tool-result", "toolCallId": call_id, "toolName": name}
        match state.get("status"):
            case "completed":
                result["output"] = self._completed_output(number, state)
                return call, result, iso_from_epoch_ms(as_object(state.get("time")).get("compacted"))
            case "error":
                partial = as_object(state.get("metadata")).get("output")
                interrupted = as_object(state.get("metadata")).get("interrupted") is True
                if interrupted and isinstance(partial, str):
                    result["output"] = {"type": "text", "value": partial}
                else:
                    result["output"] = {"type": "error-text", "value": str(state.get("error", ""))}
                return call, result, None
            case _:
                return call, None, None

    def _completed_output(self, number: int, state: dict[str, Any]) -> dict[str, Any]:
        text = str(state.get("output", ""))
        items: list[dict[str, Any]] = []
        for attachment in map(as_object, as_list(state.get("attachments"))):
            url, mime = str(attachment.get("url", "")), str(attachment.get("mime", ""))
            if url.startswith("data:") and "," in url:
                item_type = "image-data" if mime.startswith("image/") else "file-data"
                items.append({"type": item_type, "data": url.split(",", 1)[1], "mediaType": mime})
            else:
                self._skip(number, attachment, "tool attachment outside the export (only its local path is known)")
        if not items:
            return {"type": "text", "value": text}
        return {"type": "content", "value": [{"type": "text", "text": text}, *items]}

    def _answer_metadata(self, info: dict[str, Any], finish: dict[str, Any] | None, *, last: bool) -> dict[str, Any]:
        metadata: dict[str, Any] = {"opencode": _message_facts(info)}
        if isinstance(info.get("providerID"), str) and isinstance(info.get("modelID"), str):
            metadata.update(provider=info["providerID"], model=info["modelID"])
        tokens = finish.get("tokens") if finish is not None else (info.get("tokens") if last else None)
        usage = _usage(tokens)
        if usage:
            metadata["usage"] = usage
        reason = finish.get("reason") if finish is not None else (info.get("finish") if last else None)
        if isinstance(reason, str):
            metadata["finishReason"] = reason
        error = info.get("error")
        if last and isinstance(error, dict):
            aborted = error.get("name") == "MessageAbortedError"
            metadata["finishReason"] = "aborted" if aborted else "error"
            metadata["error"] = {k: error[k] for k in ("name", "data") if k in error}
        return metadata

    def _summary(self, number: int, step_id: str, info: dict[str, Any], content: list[dict[str, Any]]) -> None:
        """The summary stays a summary: the usage of the request that wrote it is not this session's context
        (the window accounting would take it for one), so only opencode's own facts are kept."""
        created = from_epoch_ms(as_object(info.get("time")).get("created"))
        parent = info.get("parentID")
        boundary = self.boundaries.get(parent) if isinstance(parent, str) else None
        if boundary is None:
            boundary = f"{info['id']}:boundary"
            through = {"compactThroughMessageId": self.messages[-1].id} if self.messages else {}
            boundary_metadata = {"runtimeKind": Kind.COMPACT_BOUNDARY.value, **through}
            self.messages.append(
                ImportedMessage(boundary, "system", "Conversation compacted", boundary_metadata, created)
            )
            self.report.repairs.append(
                Repair(number, boundary, "summary without its compaction request: boundary made")
            )
        text = "\n".join(part["text"] for part in content if part["type"] == "text")
        metadata = {
            "runtimeKind": Kind.COMPACT_SUMMARY.value,
            "summaryForBoundaryId": boundary,
            "opencode": _message_facts(info),
        }
        self.messages.append(ImportedMessage(step_id, "user", text, metadata, created))

    def _skip(self, number: int, part: dict[str, Any], reason: str) -> None:
        self.report.skipped.append(Skipped(number, f"{part.get('type')} part {part.get('id')}: {reason}"))


def _steps(message_id: str, parts: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The message's parts cut at each ``step-start`` after the first step that holds anything."""
    steps: list[tuple[str, list[dict[str, Any]]]] = [(message_id, [])]
    for part in parts:
        if part.get("type") == "step-start" and any(p.get("type") != "step-start" for p in steps[-1][1]):
            steps.append((str(part.get("id") or f"{message_id}:{len(steps)}"), []))
        steps[-1][1].append(part)
    return steps


def _with_options(part: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """opencode keeps the provider's metadata on text and reasoning parts (an Anthropic signature, an OpenAI
    item id): the AI SDK replays it from ``providerOptions``, under the same provider keys."""
    metadata = source.get("metadata")
    if isinstance(metadata, dict) and metadata and all(isinstance(v, dict) for v in metadata.values()):
        part["providerOptions"] = metadata
    return part


def _usage(tokens: Any) -> dict[str, int]:
    """opencode's ``tokens`` in the stored usage convention (README, "The model catalog")."""
    if not isinstance(tokens, dict):
        return {}
    cache = as_object(tokens.get("cache"))
    output, reasoning = tokens.get("output"), tokens.get("reasoning")
    if isinstance(output, int) and isinstance(reasoning, int):
        # opencode counts reasoning beside the output; the stored convention counts it in the output, with
        # ``reasoningTokens`` saying how much of it was reasoning.
        output += reasoning
    usage = {
        "inputTokens": tokens.get("input"),
        "outputTokens": output,
        "cacheReadTokens": cache.get("read"),
        "cacheWriteTokens": cache.get("write"),
        "reasoningTokens": tokens.get("reasoning"),
        "totalTokens": tokens.get("total"),
    }
    return {key: value for key, value in usage.items() if isinstance(value, int)}


def _message_facts(info: dict[str, Any]) -> dict[str, Any]:
    keys = ("agent", "mode", "cost", "parentID", "variant")
    facts = {key: info[key] for key in keys if key in info}
    if isinstance(info.get("model"), dict):
        facts["model"] = info["model"]
    return facts


def _session_facts(info: dict[str, Any]) -> dict[str, Any]:
    facts: dict[str, Any] = {key: info[key] for key in ("projectID", "directory", "version", "slug") if key in info}
    if isinstance(info.get("parentID"), str):
        facts["parentSessionId"] = info["parentID"]
    return facts
