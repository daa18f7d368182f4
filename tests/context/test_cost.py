"""Pricing stored usage: each part at its own rate, per response, run and session; unknown prices stay None."""

from datetime import UTC, datetime
from decimal import Decimal
from functools import cache

import pytest
from genai_prices.data import providers as genai_providers
from genai_prices.types import Provider, Usage
from hypothesis import given, settings
from hypothesis import strategies as st

from app.context.cache_report import next_request
from app.context.catalog import CatalogModel, bundled_catalog
from app.context.cost import (
    Cost,
    TokenUsage,
    UsageRecord,
    expected_cost,
    price_usage,
    session_cost,
    token_usage,
    usage_record,
)
from tests.context.catalogs import small_catalog

AT = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
MILLION = 1_000_000


def model(provider: str, name: str) -> CatalogModel:
    found = small_catalog().lookup(provider, name)
    assert found is not None
    return found


def usage(**counts: int) -> TokenUsage:
    return TokenUsage(**counts)


def record(message_id: str, name: str | None, run_id: str | None = None, **counts: int) -> UsageRecord:
    provider = None if name is None else {"c": "anthropic", "g": "openai"}.get(name[0], "gemini")
    return UsageRecord(message_id, run_id, AT, provider, name, usage(**counts))


def test_each_part_is_priced_at_its_own_rate() -> None:
    cost = price_usage(
        model("anthropic", "claude-test-4"),
        usage(input=50_000, output=50_000, cache_read=50_000, cache_write=50_000),
        at=AT,
    )
    assert cost == Cost(Decimal("0.15"), Decimal("0.75"), Decimal("0.015"), Decimal("0.1875"))
    assert cost is not None and cost.total == Decimal("1.1025")


def test_a_cache_part_without_a_rate_of_its_own_is_priced_as_input() -> None:
    cost = price_usage(model("openai", "gpt-test"), usage(input=1_000, cache_read=10_000, cache_write=2_000), at=AT)
    assert cost == Cost(input=Decimal("0.002"), cache_read=Decimal("0.005"), cache_write=Decimal("0.004"))


def test_the_long_context_tier_is_chosen_by_the_whole_prompt_cache_included() -> None:
    claude = model("anthropic", "claude-test-4")
    below = price_usage(claude, usage(input=100_000, cache_read=100_000, output=1_000), at=AT)
    above = price_usage(claude, usage(input=100_000, cache_read=100_001, output=1_000), at=AT)
    assert below == Cost(input=Decimal("0.3"), output=Decimal("0.015"), cache_read=Decimal("0.03"))
    assert above == Cost(input=Decimal("0.6"), output=Decimal("0.0225"), cache_read=Decimal("0.0600006"))


def test_a_response_is_priced_at_the_price_of_its_day() -> None:
    gemini = model("gemini", "gemini-test")
    before = price_usage(gemini, usage(input=MILLION), at=datetime(2026, 5, 31, 23, 59, tzinfo=UTC))
    after = price_usage(gemini, usage(input=MILLION), at=datetime(2026, 6, 1, tzinfo=UTC))
    assert (before, after) == (Cost(input=Decimal(10)), Cost(input=Decimal(5)))


def test_a_part_the_catalog_has_no_price_for_leaves_the_cost_unknown() -> None:
    embed = model("openai", "gpt-embed-test")
    assert price_usage(embed, usage(input=1_000, output=1), at=AT) is None
    assert price_usage(embed, usage(input=1_000), at=AT) == Cost(input=Decimal("0.0001"))
    assert price_usage(model("openai", "gpt-listed-only"), usage(input=1_000), at=AT) is None


def test_the_expected_cost_prices_the_cached_prefix_as_cache_reads() -> None:
    claude = model("anthropic", "claude-test-4")
    writing = expected_cost(
        claude, prompt_tokens=100_000, cached_prefix_tokens=90_000, output_tokens=4_000, writes_cache=True, at=AT
    )
    assert writing == Cost(output=Decimal("0.06"), cache_read=Decimal("0.027"), cache_write=Decimal("0.0375"))
    gpt = model("openai", "gpt-test")
    automatic = expected_cost(
        gpt, prompt_tokens=100_000, cached_prefix_tokens=90_000, output_tokens=4_000, writes_cache=False, at=AT
    )
    assert automatic == Cost(input=Decimal("0.02"), output=Decimal("0.032"), cache_read=Decimal("0.045"))


def bundled(name: str) -> CatalogModel:
    found = bundled_catalog().lookup("anthropic", name)
    assert found is not None
    return found


def test_cache_writes_that_live_an_hour_are_priced_at_the_one_hour_rate() -> None:
    sonnet = bundled("claude-sonnet-4-5")  # writes: $3.75 a million for five minutes, $6 for an hour (short prompts)
    cost = price_usage(sonnet, usage(cache_write=100_000, cache_write_1h=40_000), at=AT)
    assert cost == Cost(cache_write=Decimal("0.225") + Decimal("0.24"))
    stored = {"cacheWriteTokens": MILLION, "cacheWrite1hTokens": 400_000}
    assert token_usage(stored) == usage(cache_write=MILLION, cache_write_1h=400_000)
    assert token_usage({**stored, "cacheWrite1hTokens": 2 * MILLION}) == usage(
        cache_write=MILLION, cache_write_1h=MILLION
    )


def test_the_expected_cost_of_a_one_hour_cache_prices_its_writes_at_the_one_hour_rate() -> None:
    sonnet = bundled("claude-sonnet-4-5")
    one_hour = expected_cost(
        sonnet, prompt_tokens=100_000, cached_prefix_tokens=0, output_tokens=0, writes_cache=True, at=AT, cache_ttl="1h"
    )
    assert one_hour == Cost(cache_write=Decimal("0.6"))
    ahead = next_request(
        bundled_catalog(),
        provider="anthropic",
        model="claude-sonnet-4-5",
        prompt_tokens=100_000,
        unchanged_tokens=None,
        breakpoints=("system",),
        max_output_tokens=None,
        at=AT,
        cache_ttl="1h",
    )
    assert ahead.expected_cost == one_hour


def test_a_cached_prefix_longer_than_the_prompt_is_the_whole_prompt() -> None:
    cost = expected_cost(
        model("openai", "gpt-test"),
        prompt_tokens=1_000,
        cached_prefix_tokens=5_000,
        output_tokens=0,
        writes_cache=False,
        at=AT,
    )
    assert cost == Cost(cache_read=Decimal("0.0005"))


def test_stored_usage_is_read_in_the_stored_convention() -> None:
    stored = {"inputTokens": 9, "outputTokens": 221, "cacheReadTokens": 70_000, "cacheWriteTokens": 1_566}
    assert token_usage(stored) == TokenUsage(input=9, output=221, cache_read=70_000, cache_write=1_566)
    assert token_usage({**stored, "totalTokens": 71_796}) == token_usage(stored)


def test_reasoning_tokens_are_a_part_of_the_output_never_added_again() -> None:
    assert token_usage({"outputTokens": 900, "reasoningTokens": 600}) == TokenUsage(output=900)


@pytest.mark.parametrize(
    "stored",
    [None, "100", [], {}, {"inputTokens": 0, "outputTokens": 0}, {"inputTokens": True, "outputTokens": -5}],
)
def test_usage_that_counts_nothing_is_no_usage(stored: object) -> None:
    assert token_usage(stored) is None


def test_a_response_names_its_model_or_takes_its_runs() -> None:
    metadata = {"usage": {"inputTokens": 10}}
    own = usage_record("m1", "r1", AT, {**metadata, "provider": "openai", "model": "gpt-test"}, {"r1": "x"})
    from_run = usage_record("m2", "r1", AT, metadata, {"r1": "openai/gpt-test"})
    from_object = usage_record("m3", "r2", AT, metadata, {"r2": {"providerID": "openai", "modelID": "gpt-test"}})
    assert own is not None and from_run is not None and from_object is not None
    assert (own.provider, own.model) == ("openai", "gpt-test")
    assert (from_run.provider, from_run.model) == ("openai", "gpt-test")
    assert (from_object.provider, from_object.model) == ("openai", "gpt-test")


def test_synthetic_replies_and_messages_without_usage_cost_nothing() -> None:
    billed = {"usage": {"inputTokens": 10}, "model": "gpt-test"}
    assert usage_record("m1", None, AT, {**billed, "synthetic": True}, {}) is None
    assert usage_record("m2", None, AT, {"model": "gpt-test"}, {}) is None
    assert usage_record("m3", None, AT, {**billed, "finishReason": "aborted"}, {}) is not None


def test_session_cost_adds_responses_up_per_run_and_for_the_session() -> None:
    records = [
        record("m1", "claude-test-4", "r1", input=100_000),
        record("m2", "claude-test-4", "r1", output=100_000),
        record("m3", "gpt-test", "r2", cache_read=MILLION),
        record("m4", "gpt-test", None, input=MILLION),
    ]
    cost = session_cost(records, small_catalog())
    assert cost.catalog_version == "test-catalog 1"
    assert cost.runs["r1"].cost == Cost(input=Decimal("0.3"), output=Decimal("1.5"))
    assert cost.runs["r2"].cost == Cost(cache_read=Decimal("0.5"))
    assert cost.session.cost == Cost(input=Decimal("2.3"), output=Decimal("1.5"), cache_read=Decimal("0.5"))
    assert cost.session.usage == TokenUsage(input=1_100_000, output=100_000, cache_read=MILLION)
    assert cost.session.responses == 4
    assert set(cost.runs) == {"r1", "r2"}


def test_one_unpriced_response_leaves_the_total_unknown_and_says_which() -> None:
    records = [
        record("m1", "claude-test-4", "r1", input=100_000),
        record("m2", "claude-unknown", "r1", input=100_000),
        record("m3", None, "r1", input=100_000),
    ]
    cost = session_cost(records, small_catalog())
    assert cost.session.cost is None
    assert cost.session.priced_cost == Cost(input=Decimal("0.3"))
    assert cost.session.unpriced_message_ids == ("m2", "m3")
    assert [response.note for response in cost.responses] == [
        None,
        "model 'claude-unknown' is not in the catalog",
        "no model recorded for this response or its run",
    ]


def test_session_cost_serialises_with_the_catalog_version_and_null_for_unknown_prices() -> None:
    records = [record("m1", "claude-test-4", "r1", input=100_000), record("m2", None, input=1)]
    body = session_cost(records, small_catalog()).as_dict()
    assert body["catalog"] == "test-catalog 1"
    assert body["session"]["costUsd"] is None
    assert body["session"]["pricedCostUsd"]["total"] == 0.3
    assert body["runs"]["r1"]["costUsd"] == {
        "input": 0.3,
        "output": 0.0,
        "cacheRead": 0.0,
        "cacheWrite": 0.0,
        "total": 0.3,
    }
    assert body["messages"][0]["catalogModel"] == "anthropic/claude-test-4"
    assert body["messages"][1]["costUsd"] is None
    assert body["messages"][0]["usage"]["totalTokens"] == 100_000


@cache
def catalog_models() -> list[tuple[CatalogModel, Provider]]:
    """Every token-priced model of our providers in the installed catalog, with its price provider."""
    found = []
    for provider in genai_providers:
        if provider.id not in ("anthropic", "openai", "google"):
            continue
        for entry in provider.models:
            resolved = bundled_catalog().lookup(provider.id, entry.id)
            prices = entry.get_prices(AT)
            if resolved is not None and resolved.pricing is entry and getattr(prices, "input_mtok", None) is not None:
                found.append((resolved, provider))
    return found


def test_most_of_our_providers_models_are_priced_by_the_catalog() -> None:
    assert len(catalog_models()) > 150


@settings(max_examples=300)
@given(
    index=st.integers(min_value=0),
    counts=st.tuples(*(st.integers(min_value=0, max_value=600_000) for _ in range(4))),
)
def test_the_parts_add_up_to_what_the_catalog_itself_charges(index: int, counts: tuple[int, int, int, int]) -> None:
    priced, provider = catalog_models()[index % len(catalog_models())]
    assert priced.pricing is not None
    tokens = TokenUsage(*counts)
    cost = price_usage(priced, tokens, at=AT)
    reference = priced.pricing.calc_price(
        Usage(
            input_tokens=tokens.prompt,
            output_tokens=tokens.output,
            cache_read_tokens=tokens.cache_read,
            cache_write_tokens=tokens.cache_write,
        ),
        provider,
        genai_request_timestamp=AT,
    )
    assert cost is None or cost.total == reference.total_price
    if getattr(priced.pricing.get_prices(AT), "output_mtok", None) is not None:
        assert cost is not None
