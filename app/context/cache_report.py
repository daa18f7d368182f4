"""What the provider's prompt cache did for a session, and what it will do for the next request.

From stored usage (``app.context.cost``'s convention: input, cache reads and cache writes are disjoint): the
tokens the last call read from and wrote to the cache and the cached share of its prompt, and the same added
up over the live history's calls. For the request about to be sent (``/chat``): how many of its tokens are
an unchanged prefix of the previous request's, what broke the prefix when it broke, and what the request is
expected to cost with that prefix priced as cache reads where the provider will serve it. Pure.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from app.context.catalog import ModelCatalog
from app.context.cost import Cost, TokenUsage, expected_cost, token_usage
from app.engine.message import EngineMessage
from app.providers.caching import CACHES_ON_ITS_OWN, min_cacheable_tokens

PrefixBreakReason = Literal["compaction", "prune", "amendment", "mutation", "unknown"]


@dataclass(frozen=True, slots=True)
class CallCache:
    """One call's (or several calls') prompt as its provider billed it."""

    message_id: str | None
    usage: TokenUsage

    @property
    def cached_share(self) -> float | None:
        prompt = self.usage.prompt
        return round(self.usage.cache_read / prompt, 4) if prompt else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "messageId": self.message_id,
            "inputTokens": self.usage.input,
            "cacheReadTokens": self.usage.cache_read,
            "cacheWriteTokens": self.usage.cache_write,
            "cachedShare": self.cached_share,
        }


@dataclass(frozen=True, slots=True)
class HistoryState:
    """What the history was when a payload was built: enough to name what changed it since."""

    rewrites: int
    """The session's changes other than appends (its revision less its last seq): amendments, prunes, runs
    that rewrote messages. Appends only extend a payload, so they are left out."""
    boundary_id: str | None
    pruned: int
    """Tool results the live history holds pruned."""


@dataclass(frozen=True, slots=True)
class PrefixBreak:
    reason: PrefixBreakReason
    detail: str
    previous_prefix_tokens: int

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "detail": self.detail, "previousPrefixTokens": self.previous_prefix_tokens}


@dataclass(frozen=True, slots=True)
class NextRequest:
    """The request ``/chat`` is about to hand out."""

    prompt_tokens: int
    unchanged_prefix_tokens: int | None
    """Tokens at its start that the previous request of the same parameters sent too; ``None``: no previous."""
    cached_prefix_tokens: int
    """Of those, what the provider is expected to serve from its cache."""
    max_output_tokens: int | None
    expected_cost: Cost | None
    breakpoints: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "promptTokens": self.prompt_tokens,
            "unchangedPrefixTokens": self.unchanged_prefix_tokens,
            "cachedPrefixTokens": self.cached_prefix_tokens,
            "maxOutputTokens": self.max_output_tokens,
            "expectedCostUsd": None if self.expected_cost is None else self.expected_cost.as_dict(),
            "breakpoints": list(self.breakpoints),
        }


@dataclass(frozen=True, slots=True)
class CacheReport:
    last_call: CallCache | None
    live_history: CallCache
    """Every call of the live history added up (``messageId`` ``None``)."""
    compaction_invalidates_tokens: int
    """The history tokens a compaction now would take out of the cache (all of them but system and tools)."""
    next_request: NextRequest | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "lastCall": None if self.last_call is None else self.last_call.as_dict(),
            "liveHistory": self.live_history.as_dict(),
            "compactionInvalidatesTokens": self.compaction_invalidates_tokens,
            "nextRequest": None if self.next_request is None else self.next_request.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class CallTally:
    """The stored usage of the calls in a run of messages: the last one and their sum. Runs join in order
    (``+``), so a later turn adds the calls since to the tally it kept."""

    last: CallCache | None = None
    total: TokenUsage = field(default_factory=TokenUsage)

    def __add__(self, later: "CallTally") -> "CallTally":
        return CallTally(later.last or self.last, self.total + later.total)

    def report(self, history_tokens: int) -> CacheReport:
        return CacheReport(self.last, CallCache(None, self.total), max(history_tokens, 0))


def call_tally(messages: Sequence[EngineMessage]) -> CallTally:
    """The calls of ``messages`` (the live history, or a run of it) with a stored usage."""
    calls = [
        (message.id, usage)
        for message in messages
        if message.role == "assistant"
        and "usage" in message.metadata
        and (usage := token_usage(message.metadata["usage"])) is not None
    ]
    if not calls:
        return CallTally()
    return CallTally(CallCache(*calls[-1]), sum((usage for _, usage in calls), TokenUsage()))


def history_state(rewrites: int, messages: Sequence[EngineMessage], boundary_id: str | None) -> HistoryState:
    pruned = sum(1 for message in messages if message.metadata.get("compactedAt"))
    return HistoryState(rewrites, boundary_id, pruned)


def prefix_break(previous: HistoryState, now: HistoryState, *, previous_tokens: int, mutated: bool) -> PrefixBreak:
    """Why a payload no longer starts with the previous one's stable prefix, the history's changes first."""
    if previous.boundary_id != now.boundary_id:
        detail = f"compaction {now.boundary_id} replaced the history the previous request sent"
        return PrefixBreak(
            "compaction", detail if now.boundary_id else "the compaction is no longer applied", previous_tokens
        )
    if previous.pruned != now.pruned:
        return PrefixBreak("prune", f"{now.pruned - previous.pruned} more tool results were pruned", previous_tokens)
    if previous.rewrites != now.rewrites:
        return PrefixBreak("amendment", "a metadata amendment changed what the model view sends", previous_tokens)
    if mutated:
        return PrefixBreak("mutation", "a prompt mutation's target moved with the history", previous_tokens)
    detail = (
        "the payload changed with no change to the history: its tools or system prompt (a repair adds a "
        "placeholder tool once the history holds tool calls and the request names none), or how it is rendered"
    )
    return PrefixBreak("unknown", detail, previous_tokens)


def serves_prefix(provider: str, model: str, breakpoints: Sequence[str], prefix_tokens: int) -> bool:
    """Whether the provider will serve an unchanged prefix from its cache: Anthropic only up to a breakpoint
    this request and the previous one placed, which no prefix shorter than the model's minimum cacheable
    length had (the previous request, asked alike, placed its marks by the same rule); OpenAI and Gemini on
    their own, from 1,024 tokens."""
    if provider in ("anthropic", "ai-sdk") and breakpoints:
        return "history" in breakpoints and prefix_tokens >= min_cacheable_tokens(model)
    if provider in CACHES_ON_ITS_OWN:
        return prefix_tokens >= 1024
    return False


def next_request(
    catalog: ModelCatalog,
    *,
    provider: str,
    model: str,
    prompt_tokens: int,
    unchanged_tokens: int | None,
    breakpoints: Sequence[str],
    max_output_tokens: int | None,
    at: datetime,
    cache_ttl: str | None = None,
) -> NextRequest:
    """``prompt_tokens``: the context report's count of what the payload sends; ``cache_ttl``: the request's
    cache policy's (``"1h"`` writes cost the one-hour rate)."""
    unchanged = unchanged_tokens or 0
    cached = unchanged if serves_prefix(provider, model, breakpoints, unchanged) else 0
    found = catalog.lookup(provider, model)
    cost = (
        None
        if found is None
        else expected_cost(
            found,
            prompt_tokens=prompt_tokens,
            cached_prefix_tokens=cached,
            output_tokens=max_output_tokens or 0,
            writes_cache=bool(breakpoints),
            at=at,
            cache_ttl=cache_ttl,
        )
    )
    return NextRequest(prompt_tokens, unchanged_tokens, cached, max_output_tokens, cost, tuple(breakpoints))
