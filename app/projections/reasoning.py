"""Which reasoning goes to the model natively, which becomes text and which is dropped (DESIGN 4, rule 7).

The same test decides whether provider metadata on other parts (item ids, thought signatures) may stay.

Reasoning replays natively only to the provider and model that produced it (``metadata.provider`` and
``metadata.model`` of the assistant message) and only from a turn that did not end in error or abort:
signatures are bound to their producer, and a foreign or half-written signed block is a 400. A natively
kept part is passed on as the same dict, so its ``providerOptions`` (the signature) are never edited.
"""

from dataclasses import dataclass
from typing import Any

from app.projections.types import ReasoningFallback

BROKEN_FINISH_REASONS = frozenset({"error", "aborted"})


@dataclass(frozen=True, slots=True)
class ReasoningPolicy:
    include: bool
    fallback: ReasoningFallback
    provider: str | None
    model: str | None
    native_allowed: bool = True
    """False where no model will ever receive the parts natively (the compact view feeds a summarizer)."""


def reasoning_for_model(
    parts: list[dict[str, Any]], metadata: dict[str, Any], policy: ReasoningPolicy
) -> tuple[list[dict[str, Any]], list[str]]:
    if not any(part.get("type") == "reasoning" for part in parts):
        return parts, []
    why_not = _why_not_native(metadata, policy)
    if why_not is None:
        return parts, []
    if not policy.include:
        return [p for p in parts if p.get("type") != "reasoning"], ["reasoning excluded (includeReasoning off)"]
    if policy.fallback == "drop":
        return [p for p in parts if p.get("type") != "reasoning"], [f"reasoning dropped: {why_not}"]
    out: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") != "reasoning":
            out.append(part)
        elif isinstance(part.get("text"), str) and part["text"].strip():
            # Plain text without tags: tagged foreign reasoning teaches the new model to imitate the tags.
            out.append({"type": "text", "text": part["text"]})
    return out, [f"reasoning turned into text: {why_not}"]


def strip_foreign_provider_options(
    parts: list[dict[str, Any]], metadata: dict[str, Any], policy: ReasoningPolicy
) -> tuple[list[dict[str, Any]], list[str]]:
    """Provider item ids and signatures on text and tool-call parts are bound to their producer too
    (OpenAI ``fc_``/``msg_`` ids, Gemini ``thoughtSignature``): another model gets the parts without them."""
    if not any("providerOptions" in part for part in parts if part.get("type") != "reasoning"):
        return parts, []
    why_not = _why_not_native(metadata, policy)
    if why_not is None:
        return parts, []
    out = [
        {k: v for k, v in part.items() if k != "providerOptions"} if part.get("type") != "reasoning" else part
        for part in parts
    ]
    return out, [f"provider metadata removed from parts: {why_not}"]


def _why_not_native(metadata: dict[str, Any], policy: ReasoningPolicy) -> str | None:
    if not policy.include:
        return "includeReasoning is off"
    if not policy.native_allowed:
        return "this view never replays reasoning natively"
    producer = (metadata.get("provider"), metadata.get("model"))
    target = (policy.provider, policy.model)
    if None in producer or producer != target:
        return f"produced by {_name(*producer)}, the target is {_name(*target)}"
    finish = metadata.get("finishReason")
    if finish in BROKEN_FINISH_REASONS:
        return f"the turn that produced it ended with {finish}"
    return None


def _name(provider: Any, model: Any) -> str:
    if provider is None and model is None:
        return "an unknown model"
    return f"{provider or '?'}/{model or '?'}"
