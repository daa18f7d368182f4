"""What a message, a run and a session cost, priced from stored usage by the model catalog.

Stored usage counts the way Anthropic reports it: ``inputTokens`` are the prompt tokens neither read from
nor written to the cache, ``cacheReadTokens`` and ``cacheWriteTokens`` the rest of the prompt, and
``outputTokens`` everything billed as output, reasoning included; the four counts are disjoint and
``totalTokens`` is their sum. OpenAI counts the cached part inside ``prompt_tokens``
(``prompt_tokens_details.cached_tokens``) and Gemini inside ``promptTokenCount``
(``cachedContentTokenCount``): whoever stores their usage subtracts it from the input first, or the cached
tokens would be paid twice here. Gemini's ``thoughtsTokenCount`` and opencode's ``tokens.reasoning`` sit
beside the output count instead of inside it: a writer adds them to ``outputTokens``. A separate
``reasoningTokens`` is read as the part of the output it is, never added again.

Each part is priced at its own rate: cache reads at the catalog's cache-read rate, cache writes at its
five-minute write rate except the share ``cacheWrite1hTokens`` says lives an hour (Anthropic's
``cache_creation.ephemeral_1h_input_tokens``), which is priced at the one-hour write rate, and a part the
catalog gives no rate of its own at the input rate, as the catalog
does itself (OpenAI and Gemini bill no cache writes). A long prompt's price tier (above 200k tokens on some
Claude and Gemini models) is chosen by the whole prompt of that one request, so every response is priced on
its own before anything is added up. A price the catalog lacks leaves the cost ``None``: never zero, never
a neighbour's. Prices change over time, so a response is priced at the time it was stored.

Pure: the catalog and the times are passed in.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from genai_prices.types import ModelPrice, TieredPrices, calc_unit_price

from app.context.catalog import CatalogModel, ModelCatalog
from app.engine.model_ref import producer

PER_MILLION = 1_000_000
"""The catalog's prices are US dollars per million tokens."""


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """One response's tokens in the stored convention: four disjoint parts."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0
    """The share of ``cache_write`` written to the one-hour cache: a part of it, not a fifth count."""

    @property
    def prompt(self) -> int:
        """Everything the request sent, cached or not: what a price tier is chosen by."""
        return self.input + self.cache_read + self.cache_write

    @property
    def total(self) -> int:
        return self.prompt + self.output

    def __add__(self, other: "TokenUsage") -> "TokenUsage":
        return TokenUsage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.cache_write_1h + other.cache_write_1h,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "inputTokens": self.input,
            "outputTokens": self.output,
            "cacheReadTokens": self.cache_read,
            "cacheWriteTokens": self.cache_write,
            "totalTokens": self.total,
        }


def token_usage(usage: object) -> TokenUsage | None:
    """A stored ``usage`` object's counts, or ``None`` when it is not one or counts nothing."""
    if not isinstance(usage, Mapping):
        return None
    cache_write = token_count(usage.get("cacheWriteTokens"))
    counted = TokenUsage(
        input=token_count(usage.get("inputTokens")),
        output=token_count(usage.get("outputTokens")),
        cache_read=token_count(usage.get("cacheReadTokens")),
        cache_write=cache_write,
        cache_write_1h=min(token_count(usage.get("cacheWrite1hTokens")), cache_write),
    )
    return counted if counted.total else None


def token_count(value: object) -> int:
    """A count as stored: a non-negative number; anything else (``True``, a string, ``-1``) counts nothing."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0
    return int(value)


@dataclass(frozen=True, slots=True)
class Cost:
    """US dollars, each part of the usage at its own rate."""

    input: Decimal = Decimal(0)
    output: Decimal = Decimal(0)
    cache_read: Decimal = Decimal(0)
    cache_write: Decimal = Decimal(0)

    @property
    def total(self) -> Decimal:
        return self.input + self.output + self.cache_read + self.cache_write

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "input": float(self.input),
            "output": float(self.output),
            "cacheRead": float(self.cache_read),
            "cacheWrite": float(self.cache_write),
            "total": float(self.total),
        }


def price_usage(model: CatalogModel, usage: TokenUsage, *, at: datetime) -> Cost | None:
    """What ``usage`` cost on ``model`` at ``at`` (timezone-aware), or ``None`` if a part it has is unpriced."""
    if model.pricing is None:
        return None
    prices = model.pricing.get_prices(at)
    input_rate = _rate(prices, "input_mtok")
    write_rate = _rate(prices, "cache_write_mtok", otherwise=input_rate)
    parts = (
        (usage.input, input_rate),
        (usage.output, _rate(prices, "output_mtok")),
        (usage.cache_read, _rate(prices, "cache_read_mtok", otherwise=input_rate)),
        (usage.cache_write - usage.cache_write_1h, write_rate),
        (usage.cache_write_1h, _rate(prices, "cache_write_1h_mtok", otherwise=write_rate)),
    )
    dollars: list[Decimal] = []
    for count, rate in parts:
        if count and rate is None:
            return None
        dollars.append(calc_unit_price(rate, count, usage.prompt, PER_MILLION) if count else Decimal(0))
    input_cost, output_cost, read_cost, write_cost, long_write_cost = dollars
    return Cost(input_cost, output_cost, read_cost, write_cost + long_write_cost)


def _rate(
    prices: ModelPrice, key: str, *, otherwise: Decimal | TieredPrices | None = None
) -> Decimal | TieredPrices | None:
    rate = getattr(prices, key, None)
    return rate if isinstance(rate, Decimal | TieredPrices) else otherwise


def expected_cost(
    model: CatalogModel,
    *,
    prompt_tokens: int,
    cached_prefix_tokens: int,
    output_tokens: int,
    writes_cache: bool,
    at: datetime,
    cache_ttl: str | None = None,
) -> Cost | None:
    """What a request about to be sent will cost.

    ``cached_prefix_tokens`` of its prompt are served from the provider's cache (at most the whole prompt);
    the rest is written to the cache when ``writes_cache`` (Anthropic's ``cache_control`` breakpoints), at
    the one-hour write rate when ``cache_ttl`` is ``"1h"``, and is plain input otherwise (OpenAI and Gemini
    cache prefixes on their own and bill no writes).
    ``output_tokens`` is the answer expected: ``maxOutputTokens`` gives the most the request can cost.
    """
    read = min(max(cached_prefix_tokens, 0), max(prompt_tokens, 0))
    rest = max(prompt_tokens, 0) - read
    usage = TokenUsage(
        input=0 if writes_cache else rest,
        output=max(output_tokens, 0),
        cache_read=read,
        cache_write=rest if writes_cache else 0,
        cache_write_1h=rest if writes_cache and cache_ttl == "1h" else 0,
    )
    return price_usage(model, usage, at=at)


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """What pricing needs of one assistant message, so a store can read just this much of a long session."""

    message_id: str
    run_id: str | None
    created_at: datetime
    provider: str | None
    model: str | None
    usage: TokenUsage


def usage_record(
    message_id: str,
    run_id: str | None,
    created_at: datetime,
    metadata: Mapping[str, Any],
    run_models: Mapping[str, object],
) -> UsageRecord | None:
    """The usage an assistant message records, with the model that produced it (its run's when it names none;
    ``run_models`` hold each run's model reference in any form ``app.engine.model_ref`` reads).

    ``None`` when it records no usage, or is ``synthetic``: a reply the runtime made up was never billed.
    Errored and aborted answers stay: a provider bills what it produced before it stopped.
    """
    if metadata.get("synthetic") is True:
        return None
    usage = token_usage(metadata.get("usage"))
    if usage is None:
        return None
    produced = producer(metadata, run_models.get(run_id) if run_id is not None else None)
    provider, model = (produced.provider, produced.model) if produced else (None, None)
    return UsageRecord(message_id, run_id, created_at, provider, model, usage)


@dataclass(frozen=True, slots=True)
class ResponseCost:
    """One response's usage and what it cost; ``cost`` is ``None`` with ``note`` saying why."""

    record: UsageRecord
    catalog_model: CatalogModel | None
    cost: Cost | None
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        found = self.catalog_model
        return {
            "messageId": self.record.message_id,
            "runId": self.record.run_id,
            "model": self.record.model,
            "catalogModel": None if found is None else f"{found.provider}/{found.model_id}",
            "usage": self.record.usage.as_dict(),
            "costUsd": None if self.cost is None else self.cost.as_dict(),
            "note": self.note,
        }


def response_cost(record: UsageRecord, catalog: ModelCatalog) -> ResponseCost:
    if record.model is None:
        return ResponseCost(record, None, None, "no model recorded for this response or its run")
    found = catalog.lookup(record.provider, record.model)
    if found is None:
        return ResponseCost(record, None, None, f"model {record.model!r} is not in the catalog")
    cost = price_usage(found, record.usage, at=record.created_at)
    note = None if cost is not None else f"the catalog has no price for a part of {found.model_id!r}'s usage"
    return ResponseCost(record, found, cost, note)


@dataclass(frozen=True, slots=True)
class CostTotal:
    """The sum of some responses; ``cost`` only when every one of them was priced."""

    responses: int
    usage: TokenUsage
    priced_cost: Cost
    """What the priced responses cost; less than the real cost whenever some were not."""
    unpriced_message_ids: tuple[str, ...]

    @property
    def cost(self) -> Cost | None:
        return None if self.unpriced_message_ids else self.priced_cost

    def as_dict(self) -> dict[str, Any]:
        cost = self.cost
        return {
            "responses": self.responses,
            "usage": self.usage.as_dict(),
            "costUsd": None if cost is None else cost.as_dict(),
            "pricedCostUsd": self.priced_cost.as_dict(),
            "unpricedMessageIds": list(self.unpriced_message_ids),
        }


def total_cost(responses: Sequence[ResponseCost]) -> CostTotal:
    return CostTotal(
        responses=len(responses),
        usage=sum((response.record.usage for response in responses), TokenUsage()),
        priced_cost=sum((response.cost for response in responses if response.cost is not None), Cost()),
        unpriced_message_ids=tuple(response.record.message_id for response in responses if response.cost is None),
    )


@dataclass(frozen=True, slots=True)
class SessionCost:
    """Cost per response, per run and for the whole session, with the catalog that priced it."""

    catalog_version: str
    session: CostTotal
    runs: Mapping[str, CostTotal]
    """By run id; a response outside any run counts only in the session."""
    responses: tuple[ResponseCost, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "catalog": self.catalog_version,
            "session": self.session.as_dict(),
            "runs": {run_id: total.as_dict() for run_id, total in self.runs.items()},
            "messages": [response.as_dict() for response in self.responses],
        }


def session_cost(records: Iterable[UsageRecord], catalog: ModelCatalog) -> SessionCost:
    """Price every response once and add them up per run and for the session.

    ``records``: every assistant message of the session that records usage, not only those after the
    newest compaction (a compaction forgets nothing that was paid for).
    """
    responses = tuple(response_cost(record, catalog) for record in records)
    by_run: defaultdict[str, list[ResponseCost]] = defaultdict(list)
    for response in responses:
        if response.record.run_id is not None:
            by_run[response.record.run_id].append(response)
    runs = {run_id: total_cost(run_responses) for run_id, run_responses in by_run.items()}
    return SessionCost(catalog.version, total_cost(responses), runs, responses)
