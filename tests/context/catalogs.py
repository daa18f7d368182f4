"""Small model catalogs built from the catalog packages' own types, so prices and limits in tests are ours.

``claude-test-4`` is priced like a Claude model (cache reads and writes at their own rates, a long-context
tier above 200k prompt tokens), ``gpt-test`` like an OpenAI model (cache reads, no write rate, a window
models.dev lists more exactly), ``gpt-embed-test`` has no output price, ``gemini-test`` changed its price
on 2026-06-01, and ``gpt-listed-only`` has limits but no price.
"""

from datetime import date
from decimal import Decimal

from genai_prices.types import (
    ClauseContains,
    ClauseEquals,
    ClauseStartsWith,
    ConditionalPrice,
    ModelInfo,
    ModelPrice,
    Provider,
    StartDateConstraint,
    Tier,
    TieredPrices,
)

from app.context.catalog import ModelCatalog, ModelLimits

CLAUDE = ModelInfo(
    id="claude-test-4",
    match=ClauseStartsWith(starts_with="claude-test-4"),
    context_window=200_000,
    prices=ModelPrice(
        input_mtok=TieredPrices(base=Decimal(3), tiers=[Tier(start=200_000, price=Decimal(6))]),
        output_mtok=TieredPrices(base=Decimal(15), tiers=[Tier(start=200_000, price=Decimal("22.5"))]),
        cache_read_mtok=TieredPrices(base=Decimal("0.3"), tiers=[Tier(start=200_000, price=Decimal("0.6"))]),
        cache_write_mtok=TieredPrices(base=Decimal("3.75"), tiers=[Tier(start=200_000, price=Decimal("7.5"))]),
    ),
)
GPT = ModelInfo(
    id="gpt-test",
    match=ClauseStartsWith(starts_with="gpt-test"),
    context_window=1_000_000,
    prices=ModelPrice(input_mtok=Decimal(2), output_mtok=Decimal(8), cache_read_mtok=Decimal("0.5")),
)
GPT_NO_OUTPUT_PRICE = ModelInfo(
    id="gpt-embed-test",
    match=ClauseEquals(equals="gpt-embed-test"),
    context_window=8_192,
    prices=ModelPrice(input_mtok=Decimal("0.1")),
)
GEMINI = ModelInfo(
    id="gemini-test",
    match=ClauseStartsWith(starts_with="gemini-test"),
    context_window=1_000_000,
    prices=[
        ConditionalPrice(prices=ModelPrice(input_mtok=Decimal(10), output_mtok=Decimal(40))),
        ConditionalPrice(
            constraint=StartDateConstraint(start_date=date(2026, 6, 1)),
            prices=ModelPrice(input_mtok=Decimal(5), output_mtok=Decimal(20)),
        ),
    ],
)

PROVIDERS = [
    Provider(
        id="anthropic",
        name="Anthropic",
        api_pattern="anthropic",
        model_match=ClauseContains(contains="claude"),
        provider_match=ClauseContains(contains="anthropic"),
        models=[CLAUDE],
    ),
    Provider(
        id="openai",
        name="OpenAI",
        api_pattern="openai",
        model_match=ClauseStartsWith(starts_with="gpt-"),
        provider_match=ClauseContains(contains="openai"),
        models=[GPT, GPT_NO_OUTPUT_PRICE],
    ),
    Provider(
        id="google",
        name="Google",
        api_pattern="google",
        model_match=ClauseContains(contains="gemini"),
        provider_match=ClauseContains(contains="google"),
        models=[GEMINI],
    ),
]
LIMITS = {
    "anthropic": {"claude-test-4-20260101": ModelLimits(200_000, 64_000)},
    "openai": {"gpt-test": ModelLimits(1_047_576, 32_768), "gpt-listed-only": ModelLimits(128_000, 16_384)},
}


CURRENT_MODELS = [
    ("anthropic", "claude-opus-5"),
    ("anthropic", "claude-sonnet-5-5"),
    ("anthropic", "claude-haiku-5-5"),
    ("anthropic", "claude-opus-4-8"),
    ("anthropic", "claude-opus-4-7"),
    ("anthropic", "claude-sonnet-4-6"),
    ("anthropic", "claude-haiku-4-5-20251001"),
    ("anthropic", "claude-sonnet-4-5-20250929"),
    ("openai", "gpt-6.1-sol"),
    ("openai", "gpt-6-sol"),
    ("openai", "gpt-5.6-terra"),
    ("openai", "gpt-5.5"),
    ("openai", "gpt-5.4-mini"),
    ("openai", "gpt-5.1-codex"),
    ("openai", "gpt-4.1"),
    ("openai", "o4-mini"),
    ("openai", "o3"),
    ("gemini", "gemini-4-argon"),
    ("gemini", "gemini-3.8-flash"),
    ("gemini", "gemini-3.5-flash"),
    ("gemini", "gemini-3.1-pro-preview"),
    ("gemini", "gemini-2.5-pro"),
    ("gemini", "gemini-2.5-flash"),
]
"""Current models of each provider we serve, as the installed catalog lists them: each must get a window."""


def small_catalog() -> ModelCatalog:
    return ModelCatalog(PROVIDERS, LIMITS, version="test-catalog 1")
