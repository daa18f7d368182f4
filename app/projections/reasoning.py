"""Which reasoning goes to the model natively, which becomes text and which is dropped.

The same test decides whether provider metadata on other parts (item ids, thought signatures) may stay, and
whether the calls and results of tools the provider ran itself (web search, code execution) go in.

Reasoning replays natively only to the provider and model that produced it (``app.engine.model_ref.producer``:
the assistant message's ``metadata.model`` and ``metadata.provider``, else its run's model) and only from a
turn that did not end in error or abort: signatures are bound to their producer, and a foreign or
half-written signed block is a 400. A natively kept part is passed on as the same dict, so its
``providerOptions`` (the signature) are never edited.
"""

from dataclasses import dataclass
from typing import Any

from app.engine.model_ref import ModelRef, same_producer
from app.projections.types import ReasoningFallback

BROKEN_FINISH_REASONS = frozenset({"error", "aborted"})


@dataclass(frozen=True, slots=True)
class ReasoningPolicy:
    include: bool
    fallback: ReasoningFallback
    target: ModelRef | None
    native_allowed: bool = True
    """False where no model will ever receive the parts natively (the compact view feeds a summarizer)."""


def reasoning_for_model(
    parts: list[dict[str, Any]], metadata: dict[str, Any], produced: ModelRef | None, policy: ReasoningPolicy
) -> tuple[list[dict[str, Any]], list[str], tuple[dict[str, Any], ...]]:
    """The parts the model gets, why they differ from ``parts``, and which of them carry the reasoning."""
    reasoning = tuple(part for part in parts if part.get("type") == "reasoning")
    if not reasoning:
        return parts, [], ()
    why_not = _why_not_native(metadata, produced, policy)
    if why_not is None:
        return parts, [], reasoning
    if not policy.include:
        return [p for p in parts if p.get("type") != "reasoning"], ["reasoning excluded (includeReasoning off)"], ()
    if policy.fallback == "drop":
        return [p for p in parts if p.get("type") != "reasoning"], [f"reasoning dropped: {why_not}"], ()
    out: list[dict[str, Any]] = []
    as_text: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") != "reasoning":
            out.append(part)
        elif isinstance(part.get("text"), str) and part["text"].strip():
            # Plain text without tags: tagged foreign reasoning teaches the new model to imitate the tags.
            as_text.append({"type": "text", "text": part["text"]})
            out.append(as_text[-1])
    return out, [f"reasoning turned into text: {why_not}"], tuple(as_text)


def strip_foreign_provider_options(
    parts: list[dict[str, Any]], produced: ModelRef | None, policy: ReasoningPolicy
) -> tuple[list[dict[str, Any]], list[str]]:
    """Provider item ids and signatures on text and tool-call parts are bound to their producer too
    (OpenAI ``fc_``/``msg_`` ids, Gemini ``thoughtSignature``): another model gets the parts without them.
    Unlike reasoning, they stay for their producer even when reasoning is excluded: a Gemini 3 call without
    its signature is rejected."""
    if not any("providerOptions" in part for part in parts if part.get("type") != "reasoning"):
        return parts, []
    why_not = _foreign(produced, policy)
    if why_not is None:
        return parts, []
    out = [
        {k: v for k, v in part.items() if k != "providerOptions"}
        if "providerOptions" in part and part.get("type") != "reasoning"
        else part
        for part in parts
    ]
    return out, [f"provider metadata removed from parts: {why_not}"]


def provider_executed_for_model(
    parts: list[dict[str, Any]], produced: ModelRef | None, policy: ReasoningPolicy
) -> tuple[list[dict[str, Any]], list[str]]:
    """The calls and results of tools a provider ran itself (``providerExecuted``) replay only to a model of
    that provider: another API has no way to take a web search or a code run it did not make (its results
    hold the first provider's encrypted content). Elsewhere they leave the turn, said so in the notes."""
    if not any(part.get("providerExecuted") is True for part in parts):
        return parts, []
    family = produced.family if produced is not None else None
    if policy.native_allowed and policy.target is not None and family is not None and family == policy.target.family:
        return parts, []
    kept = [part for part in parts if part.get("providerExecuted") is not True]
    why = f"produced by {_name(produced)}, the target is {_name(policy.target)}"
    return kept, [f"{len(parts) - len(kept)} provider-executed tool part(s) removed: {why}"]


def _why_not_native(metadata: dict[str, Any], produced: ModelRef | None, policy: ReasoningPolicy) -> str | None:
    if not policy.include:
        return "includeReasoning is off"
    foreign = _foreign(produced, policy)
    if foreign is not None:
        return foreign
    finish = metadata.get("finishReason")
    if finish in BROKEN_FINISH_REASONS:
        return f"the turn that produced it ended with {finish}"
    return None


def _foreign(produced: ModelRef | None, policy: ReasoningPolicy) -> str | None:
    """Why the target is not the producer, or ``None`` when it is."""
    if not policy.native_allowed:
        return "this view never replays provider state natively"
    if same_producer(produced, policy.target):
        return None
    return f"produced by {_name(produced)}, the target is {_name(policy.target)}"


def _name(ref: ModelRef | None) -> str:
    if ref is None or (ref.provider is None and ref.model is None):
        return "an unknown model"
    return f"{ref.provider or '?'}/{ref.model or '?'}"
