"""Builders for context tests: engine messages that read like the domain, with token costs under control.

Every builder returns an un-numbered message; ``history`` numbers them (seq 1, 2, ...; id ``m<seq>`` unless
given) and promotes them, as the store would. ``tokens=`` sets the stored write-time estimate, so that
thresholds can be hit exactly; without it the real estimator decides.
"""

from dataclasses import replace
from typing import Any

from app.engine.kinds import Role
from app.engine.message import EngineMessage
from app.engine.persisted import Content, PersistedMessage
from app.engine.tokens import estimate_tokens
from tests import builders

MODEL = "qwen-coder"
PROVIDER = "vllm"


def history(*messages: PersistedMessage, start_seq: int = 1) -> list[EngineMessage]:
    """Numbered and promoted as the store would (``tests.builders.engine``)."""
    return builders.engine(*messages, start_seq=start_seq)


def message(
    role: Role,
    content: Content,
    *,
    id: str = "",
    tokens: int | None = None,
    run_id: str | None = None,
    **metadata: Any,
) -> PersistedMessage:
    built = builders.message(role, content, id=id, run_id=run_id, **metadata)
    return replace(built, token_estimate=estimate_tokens(content) if tokens is None else tokens)


def system(text: str, **kw: Any) -> PersistedMessage:
    return message("system", text, **kw)


def user(text: str, **kw: Any) -> PersistedMessage:
    return message("user", text, **kw)


def assistant(
    text: str,
    *,
    usage: dict[str, int] | None = None,
    model: str | None = MODEL,
    finish: str | None = "stop",
    reasoning: str | None = None,
    **kw: Any,
) -> PersistedMessage:
    parts: list[dict[str, Any]] = []
    if reasoning is not None:
        parts.append({"type": "reasoning", "text": reasoning})
    parts.append({"type": "text", "text": text})
    metadata: dict[str, Any] = {"provider": PROVIDER}
    if model is not None:
        metadata["model"] = model
    if usage is not None:
        metadata["usage"] = usage
    if finish is not None:
        metadata["finishReason"] = finish
    return message("assistant", parts, **metadata, **kw)


def call(call_id: str, name: str = "Read", *, usage: dict[str, int] | None = None, **kw: Any) -> PersistedMessage:
    metadata: dict[str, Any] = {"model": MODEL, "finishReason": "tool-calls"}
    if usage is not None:
        metadata["usage"] = usage
    part = {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": {"path": "a.ts"}}
    return message("assistant", [part], **metadata, **kw)


def calls(*call_ids: str, name: str = "Read", **kw: Any) -> PersistedMessage:
    parts = [
        {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": {"path": f"{call_id}.ts"}}
        for call_id in call_ids
    ]
    return message("assistant", parts, model=MODEL, **kw)


def result(
    call_id: str, output: str = "ok", name: str = "Read", *, compacted: bool = False, **kw: Any
) -> PersistedMessage:
    part = {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": name,
        "output": {"type": "text", "value": output},
    }
    if compacted:
        kw["compactedAt"] = "2026-04-08T10:00:00+00:00"
    return message("tool", [part], **kw)


def approval_request(approval_id: str, call_id: str, **kw: Any) -> PersistedMessage:
    part = {"type": "tool-approval-request", "approvalId": approval_id, "toolCallId": call_id}
    return message("assistant", [part], **kw)


def approval_response(approval_id: str, *, approved: bool = True, **kw: Any) -> PersistedMessage:
    part = {"type": "tool-approval-response", "approvalId": approval_id, "approved": approved}
    return message("tool", [part], **kw)


def boundary(id: str, *, through: str | None = None, **kw: Any) -> PersistedMessage:
    metadata: dict[str, Any] = {"runtimeKind": "compact_boundary"}
    if through is not None:
        metadata["compactThroughMessageId"] = through
    return message("system", "Conversation compacted", id=id, **metadata, **kw)


def summary(boundary_id: str, text: str = "## Goal\nfix login", *, id: str = "", **kw: Any) -> PersistedMessage:
    return message("system", text, id=id, runtimeKind="compact_summary", summaryForBoundaryId=boundary_id, **kw)


def usage(total: int) -> dict[str, int]:
    """A provider usage whose parts add up to ``total`` (input and output, no cache)."""
    return {"inputTokens": total - 10, "outputTokens": 10}
