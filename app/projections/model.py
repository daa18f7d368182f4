"""The model view: exactly the context a model should see.

Steps, in order: order the input by seq; choose the live history (summary first, boundary never sent);
apply each kind's rule; drop result parts whose call is not in the view; move whatever sits between a call
and its results to just after them. Every message given is either in the output (``source_message_ids``) or
in ``hidden_message_ids``, with its reasons in ``diagnostics.reasons``. Deterministic: the same input gives
the same output. Never serializes for a provider, never reads storage or the clock, never mutates its input.
The compact view reuses this pipeline with its own ``ViewPolicy``.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, assert_never

from app.engine.kinds import Kind, Role
from app.engine.message import EngineMessage
from app.engine.model_ref import producer, target_ref
from app.engine.persisted import Content
from app.projections.framing import (
    BRANCH_PREAMBLE,
    HANDOFF_PREAMBLE,
    SPLIT_TURN_PREAMBLE,
    SUMMARY_PREAMBLE,
    bash_frame,
    reminder_frame,
    summary_frame,
)
from app.projections.live_history import (
    COMPACTION_KINDS,
    AppliedCompaction,
    applied_compaction,
    completes_its_boundary,
    summary_for,
)
from app.projections.media import MediaStyle, readable_content
from app.projections.pairing import drop_unanswerable_results, keep_results_next_to_calls, needs_pairing_repairs
from app.projections.plain_text import is_blank, plain_text
from app.projections.reasoning import (
    ReasoningPolicy,
    provider_executed_for_model,
    reasoning_for_model,
    strip_foreign_provider_options,
)
from app.projections.tool_output import ResultPolicy, cut, result_for_model
from app.projections.types import (
    Diagnostics,
    ProjectedMessage,
    ProjectedMetadata,
    Projection,
    ProjectionContext,
    View,
)

REMINDER_TAGS = frozenset({"reminder", "runtime-reminder", "system-reminder"})


@dataclass(frozen=True, slots=True)
class ViewPolicy:
    """How a view built on the model pipeline differs from the model view itself."""

    view: View
    media_style: MediaStyle
    native_reasoning: bool
    inject_reminders: bool
    soft_limit_cap: int | None = None


MODEL_POLICY = ViewPolicy(View.MODEL, media_style="explain", native_reasoning=True, inject_reminders=True)


@dataclass(frozen=True, slots=True)
class Hidden:
    reason: str


def project_model(messages: Sequence[EngineMessage], ctx: ProjectionContext) -> Projection:
    return build_view(messages, ctx, MODEL_POLICY)


def before_window(boundary_id: str) -> str:
    """Why a message older than the applied compaction's kept tail is not sent."""
    return f"before the compaction window of boundary {boundary_id}"


def marked_as_reminder(message: EngineMessage) -> bool:
    """An agent or model switch note goes to the model only when tagged as a reminder (or ``reminder: true``)."""
    tags = message.metadata.get("tags")
    tagged = isinstance(tags, list) and any(tag in REMINDER_TAGS for tag in tags if isinstance(tag, str))
    return tagged or message.metadata.get("reminder") is True


def build_view(messages: Sequence[EngineMessage], ctx: ProjectionContext, policy: ViewPolicy) -> Projection:
    ordered = _ordered(messages)
    diagnostics = Diagnostics()
    # Only compaction records can apply a compaction or complete a boundary: a history without them (most
    # sessions, and every store slice past its summary) skips both scans of the whole list.
    markers = [m for m in ordered if m.kind in COMPACTION_KINDS]
    applied = applied_compaction(ordered) if ctx.apply_compact_boundary and markers else None
    complete = {summary_for(m) for m in markers if completes_its_boundary(m)}
    rules = _Rules(ctx, policy, applied, complete, diagnostics)
    out: list[ProjectedMessage] = []
    if applied is not None:
        out.append(rules.summary(applied))
    rule_of = _RULE
    hidden_ids = diagnostics.hidden_message_ids
    reasons = diagnostics.reasons
    summary_id = applied.compaction.summary.id if applied is not None else None
    boundary_id = applied.compaction.boundary.id if applied is not None else ""
    for message in ordered:
        if message.id == summary_id:
            continue
        metadata = message.metadata
        # Two reasons hide any message before its kind's rule sees it; checked here rather than in a method
        # of the rules, which would be one more call per message.
        if applied is not None and message.seq < applied.tail_start_seq and message.id != boundary_id:
            outcome: ProjectedMessage | Hidden = Hidden(before_window(boundary_id))
        elif (
            metadata and metadata.get("eligibleForModelContext") is False and message.kind is not Kind.COMPACT_BOUNDARY
        ):
            outcome = Hidden("eligibleForModelContext is false")
        else:
            outcome = rule_of[message.kind](rules, message)
        if type(outcome) is Hidden:
            hidden_ids.append(message.id)
            reasons.setdefault(message.id, []).append(outcome.reason)
        else:
            out.append(outcome)  # type: ignore[arg-type]
    if needs_pairing_repairs(out):
        out = drop_unanswerable_results(out, diagnostics)
        # With every result after its call, the walk answers for the moving pass alone, at a fraction of its
        # cost: a window cut after a call (a compaction's kept tail) needs only the drop.
        if needs_pairing_repairs(out):
            out = keep_results_next_to_calls(out, diagnostics)
    if len(hidden_ids) > 1:
        seqs = {m.id: m.seq for m in ordered}
        hidden_ids.sort(key=lambda id_: seqs[id_])
    return Projection(policy.view, out, diagnostics)


_BY_SEQ = attrgetter("seq")


def _ordered(messages: Sequence[EngineMessage]) -> list[EngineMessage]:
    # The store may hand over the linked summary beside rows that already hold it: one copy per id.
    unique: dict[str, EngineMessage] = {}
    for message in messages:
        unique.setdefault(message.id, message)
    return sorted(unique.values(), key=_BY_SEQ)


class _Rules:
    """One kind rule per ``Kind``; each returns the projected message or why it is hidden."""

    def __init__(
        self,
        ctx: ProjectionContext,
        policy: ViewPolicy,
        applied: AppliedCompaction | None,
        complete_boundaries: set[str | None],
        diagnostics: Diagnostics,
    ) -> None:
        self.ctx = ctx
        self.policy = policy
        self.applied = applied
        self.complete_boundaries = complete_boundaries
        self.diagnostics = diagnostics
        limit = ctx.tool_result_soft_limit_chars
        if policy.soft_limit_cap is not None:
            limit = policy.soft_limit_cap if limit <= 0 else min(limit, policy.soft_limit_cap)
        self.soft_limit = limit
        self.reasoning = ReasoningPolicy(
            include=ctx.include_reasoning,
            fallback=ctx.reasoning_fallback,
            target=target_ref(ctx.provider, ctx.model),
            native_allowed=policy.native_reasoning,
        )
        self.readable = ctx.readable_media if policy.media_style == "explain" else ()
        self.view = policy.view
        self._shared: dict[tuple[str | None, ...], ProjectedMetadata] = {}

    def summary(self, applied: AppliedCompaction) -> ProjectedMessage:
        boundary, summary = applied.compaction.boundary, applied.compaction.summary
        self.diagnostics.applied_compact_boundary_id = boundary.id
        self.diagnostics.injected_notes.append(
            f"compact summary {summary.id} of boundary {boundary.id} sent first as earlier history"
        )
        record = boundary.metadata.get("compaction")
        split = isinstance(record, dict) and record.get("splitTurn") is True
        text = summary_frame(SPLIT_TURN_PREAMBLE if split else SUMMARY_PREAMBLE, plain_text(summary.content))
        return self._message(summary, "user", text, ["wrapped in <summary> as earlier history"])

    def _user(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        content, notes = readable_content(message.content, self.readable, self.policy.media_style)
        return self._finish(message, "user", content, notes)

    def _system_note(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        return self._finish(message, "system", message.content, [])

    def _boundary(self, message: EngineMessage) -> Hidden:
        return Hidden(self._boundary_reason(message))

    def _unused_summary(self, message: EngineMessage) -> Hidden:
        """Every summary but the applied one, which ``summary`` sends first."""
        return Hidden(self._summary_reason(message))

    def _handoff(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        return self._wrapped(message, HANDOFF_PREAMBLE)

    def _branch(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        return self._wrapped(message, BRANCH_PREAMBLE)

    def _switch(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        if not marked_as_reminder(message):
            what = "agent" if message.kind is Kind.AGENT_SWITCH_NOTE else "model"
            return Hidden(f"{what} switch marker: UI only (not tagged as a reminder)")
        return self._reminder(message)

    def _boundary_reason(self, message: EngineMessage) -> str:
        if self.applied is not None and message.id == self.applied.compaction.boundary.id:
            return f"compaction boundary: never sent; its summary {self.applied.compaction.summary.id} is sent first"
        if not self.ctx.apply_compact_boundary:
            return "compaction boundary: never sent (applyCompactBoundary off)"
        if message.id not in self.complete_boundaries:
            return "incomplete compaction boundary: no summary with text, eligible for the model, names it; ignored"
        return "compaction boundary: never sent (an older compaction)"

    def _summary_reason(self, message: EngineMessage) -> str:
        if not self.ctx.apply_compact_boundary:
            return "compact summary not sent: applyCompactBoundary off, the full history is sent instead"
        if is_blank(plain_text(message.content)):
            return "empty compact summary: its compaction is incomplete"
        if self.applied is not None:
            return f"compact summary not used: the applied compaction is {self.applied.compaction.boundary.id}"
        return "compact summary not used: its boundary is not in this history"

    def _assistant(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        content = message.content
        if isinstance(content, str):
            return self._finish(message, "assistant", content, [])
        if content and _untouched_assistant_parts(content):
            # No reasoning, no provider options, no blank text: no rule changes these parts, so the
            # stored list is passed on as it is (nothing downstream edits a projected message in place).
            return self._unchanged(message, "assistant", content)
        metadata = message.metadata
        produced = producer(metadata, self.ctx.run_models.get(message.run_id) if message.run_id else None)
        parts, notes, reasoning = reasoning_for_model(content, metadata, produced, self.reasoning)
        parts, executed = provider_executed_for_model(parts, produced, self.reasoning)
        parts, stripped = strip_foreign_provider_options(parts, produced, self.reasoning)
        readable, media = readable_content(parts, self.readable, self.policy.media_style)
        notes = [*notes, *executed, *stripped, *media]
        return self._finish(message, "assistant", readable, notes, reasoning)

    def _tool(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        content = message.content
        if isinstance(content, str) or not content:
            return Hidden("empty tool message")
        metadata = message.metadata
        compacted = bool(metadata.get("compactedAt")) if metadata else False
        if not compacted and self.ctx.include_tool_results and _untouched_results(content, self.soft_limit):
            # Every result is non-blank text within the soft limit: the stored parts go out as they are.
            return self._unchanged(message, "tool", content)
        policy = ResultPolicy(
            compacted=compacted,
            include=self.ctx.include_tool_results,
            soft_limit=self.soft_limit,
            message_id=message.id,
            readable=self.readable,
            media_style=self.policy.media_style,
        )
        parts: list[dict[str, Any]] = []
        notes: list[str] = []
        truncated = False
        for part in content:
            if part.get("type") != "tool-result":
                parts.append(part)
                continue
            change = result_for_model(part, policy)
            parts.append(change.part)
            notes.extend(n for n in change.notes if n not in notes)
            truncated = truncated or change.truncated
        return self._message(message, "tool", parts, notes, truncated=truncated, compacted=compacted)

    def _reminder(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        inject = self.ctx.inject_runtime_reminder and self.policy.inject_reminders
        if not inject:
            return Hidden("runtime reminder not injected (injectRuntimeReminder off or not history)")
        text = plain_text(message.content)
        if is_blank(text):
            return Hidden("empty: no text to send")
        self.diagnostics.injected_notes.append(f"{message.kind} {message.id} injected as <system-reminder>")
        return self._message(message, "user", reminder_frame(text), ["wrapped in <system-reminder>"])

    def _wrapped(self, message: EngineMessage, preamble: str) -> ProjectedMessage | Hidden:
        text = plain_text(message.content)
        if is_blank(text):
            return Hidden("empty: no text to send")
        return self._message(message, "user", summary_frame(preamble, text), ["wrapped in <summary>"])

    def _bash(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        if message.metadata.get("excludeFromContext") is True:
            return Hidden("bash execution excluded from context (excludeFromContext)")
        output = message.metadata.get("output")
        output, omitted = cut(output if isinstance(output, str) else "", self.soft_limit)
        text = bash_frame(message.metadata, plain_text(message.content), output, omitted)
        notes = [f"bash output truncated to {self.soft_limit} characters ({omitted} left out)"] if omitted else []
        return self._message(message, "user", text, ["flattened to user text", *notes], truncated=bool(omitted))

    def _custom(self, message: EngineMessage) -> ProjectedMessage | Hidden:
        if message.metadata.get("displayOnly") is True:
            return Hidden("display-only custom message")
        if message.metadata.get("excludeFromContext") is True:
            return Hidden("custom message excluded from context (excludeFromContext)")
        content, notes = readable_content(message.content, self.readable, self.policy.media_style)
        return self._finish(message, "user", content, notes)

    def _finish(
        self,
        message: EngineMessage,
        role: Role,
        content: Content,
        notes: list[str],
        reasoning: tuple[dict[str, Any], ...] = (),
    ) -> ProjectedMessage | Hidden:
        """Blank text is never sent: a blank message is hidden, blank text parts are removed. Content with
        nothing to remove goes on as the same list, so the accounting sees that it was not changed."""
        if isinstance(content, str):
            if is_blank(content):
                return Hidden("empty: no text to send")
            return self._message(message, role, content, notes)
        kept = [p for p in content if not (p.get("type") == "text" and is_blank(str(p.get("text", ""))))]
        if len(kept) == len(content):
            kept = content
        else:
            notes = [*notes, f"{len(content) - len(kept)} empty text part(s) removed"]
        if not kept:
            return Hidden("empty: nothing left to send" + (f" ({'; '.join(notes)})" if notes else ""))
        return self._message(message, role, kept, notes, reasoning=reasoning)

    def _message(
        self,
        message: EngineMessage,
        role: Role,
        content: Content,
        notes: list[str],
        *,
        truncated: bool = False,
        compacted: bool = False,
        reasoning: tuple[dict[str, Any], ...] = (),
    ) -> ProjectedMessage:
        if notes:
            self.diagnostics.reasons.setdefault(message.id, []).extend(notes)
        if truncated:
            self.diagnostics.truncated_message_ids.append(message.id)
        if not (notes or truncated or compacted):
            return self._unchanged(message, role, content, reasoning)
        metadata = ProjectedMetadata(False, False, truncated, compacted, tuple(notes), _extra(message))
        return ProjectedMessage(
            self.view, role, message.kind, (message.id,), content, metadata, reasoning, message.unusual_text
        )

    def _unchanged(
        self, message: EngineMessage, role: Role, content: Content, reasoning: tuple[dict[str, Any], ...] = ()
    ) -> ProjectedMessage:
        """``_message`` with nothing to note, which the fast paths call directly (most messages). Most carry
        nothing but their producer: one shared (frozen) metadata per distinct producer in this projection
        instead of one per message."""
        key = _producer(message) if message.role == "assistant" else _NO_PRODUCER
        shared = self._shared.get(key) if key is not None else None
        if shared is None:
            shared = ProjectedMetadata(extra=_extra(message))
            if key is not None:
                self._shared[key] = shared
        return ProjectedMessage(
            self.view, role, message.kind, (message.id,), content, shared, reasoning, message.unusual_text
        )


Rule = Callable[[_Rules, EngineMessage], ProjectedMessage | Hidden]


def _rule(kind: Kind) -> Rule:
    """Each kind's rule: one exhaustive match, read once into ``_RULE`` so that projecting a message is one
    table lookup (a match tries its cases in order, reading an enum member for each)."""
    match kind:
        case Kind.TOOL_RESULT | Kind.TOOL_APPROVAL_RESPONSE:
            return _Rules._tool
        case Kind.ASSISTANT_TEXT | Kind.ASSISTANT_REASONING | Kind.TOOL_CALL | Kind.TOOL_APPROVAL_REQUEST:
            return _Rules._assistant
        case Kind.USER_INPUT:
            return _Rules._user
        case Kind.SYSTEM_NOTE:
            return _Rules._system_note
        case Kind.COMPACT_BOUNDARY:
            return _Rules._boundary
        case Kind.COMPACT_SUMMARY:
            return _Rules._unused_summary
        case Kind.RUNTIME_REMINDER:
            return _Rules._reminder
        case Kind.HANDOFF_SUMMARY:
            return _Rules._handoff
        case Kind.BRANCH_SUMMARY:
            return _Rules._branch
        case Kind.AGENT_SWITCH_NOTE | Kind.MODEL_SWITCH_NOTE:
            return _Rules._switch
        case Kind.BASH_EXECUTION:
            return _Rules._bash
        case Kind.CUSTOM:
            return _Rules._custom
        case _:
            assert_never(kind)


_RULE: dict[Kind, Rule] = {kind: _rule(kind) for kind in Kind}


_EXTRA_KEYS = ("provider", "model", "finishReason")


def _extra(message: EngineMessage) -> dict[str, Any]:
    """What a serializer may need to know about where an assistant turn came from and how it ended."""
    if message.role != "assistant":
        return {}
    metadata = message.metadata
    return {key: metadata[key] for key in _EXTRA_KEYS if metadata.get(key) is not None}


_NO_PRODUCER: tuple[str | None, ...] | None = ()
"""The key of every message but an assistant one: its ``extra`` is empty."""


def _producer(message: EngineMessage) -> tuple[str | None, ...] | None:
    """What ``_extra`` is made of for an assistant message, as a key: messages with equal keys get equal
    ``extra``. Only strings make a key (``None`` otherwise): ``1``, ``1.0`` and ``True`` are equal keys but not
    equal JSON."""
    metadata = message.metadata
    provider, model, finish = metadata.get("provider"), metadata.get("model"), metadata.get("finishReason")
    # Unrolled, not a loop over the key: this runs for every assistant message of a long history.
    if (
        (provider is None or type(provider) is str)
        and (model is None or type(model) is str)
        and (finish is None or type(finish) is str)
    ):
        return (provider, model, finish)
    return None


def _untouched_assistant_parts(parts: list[dict[str, Any]]) -> bool:
    """Parts no assistant rule changes: reasoning rules, provider-option stripping, the provider-executed rule,
    the media rule and blank-text removal act only on reasoning parts, parts with ``providerOptions`` or
    ``providerExecuted``, files (an image the assistant made) and blank text parts."""
    for part in parts:
        if "providerOptions" in part or "providerExecuted" in part:
            return False
        part_type = part.get("type")
        if part_type == "reasoning" or part_type == "file":
            return False
        if part_type == "text" and is_blank(str(part.get("text", ""))):
            return False
    return True


def _untouched_results(parts: list[dict[str, Any]], soft_limit: int) -> bool:
    """Tool parts ``result_for_model`` would return as they are, found without building its policy: text
    results that are not blank and fit the soft limit, and parts that are not results."""
    for part in parts:
        if part.get("type") != "tool-result":
            continue
        output = part.get("output")
        if not isinstance(output, dict) or output.get("type") not in _TEXT_OUTPUTS:
            return False
        value = output.get("value")
        if not isinstance(value, str) or (soft_limit > 0 and len(value) > soft_limit) or is_blank(value):
            return False
    return True


_TEXT_OUTPUTS = frozenset({"text", "error-text"})
