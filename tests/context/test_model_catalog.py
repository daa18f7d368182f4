"""Model ids matched the way providers write them, against the installed catalog and a small one of ours."""

import pytest

from app.context.catalog import (
    bundled_catalog,
    default_max_output_tokens,
    model_reference,
    provider_family,
    readable_media,
)
from tests.context.catalogs import CURRENT_MODELS, small_catalog


@pytest.mark.parametrize(("provider", "model"), CURRENT_MODELS)
def test_every_current_model_of_our_providers_has_a_window_and_prices(provider: str, model: str) -> None:
    found = bundled_catalog().lookup(provider, model)
    assert found is not None
    assert found.context_window is not None and found.context_window >= 128_000
    assert found.pricing is not None


def test_a_dated_version_is_the_model_it_dates() -> None:
    catalog = bundled_catalog()
    dated = catalog.lookup("anthropic", "claude-sonnet-4-5-20250929")
    assert dated is not None
    assert dated.model_id == "claude-sonnet-4-5"
    assert dated == catalog.lookup("anthropic", "claude-sonnet-4-5")
    assert catalog.lookup("openai", "gpt-4o-2024-08-06") == catalog.lookup("openai", "gpt-4o")


@pytest.mark.parametrize(
    ("provider", "model", "same_as"),
    [
        (None, "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("ai-sdk", "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("anthropic", "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        (None, "claude-sonnet-4-5", "claude-sonnet-4-5"),
        (None, "openai/gpt-5.4", "gpt-5.4"),
        ("gemini", "models/gemini-2.5-pro", "gemini-2.5-pro"),
        ("anthropic.messages", "claude-opus-4-7", "claude-opus-4-7"),
        ("openai.responses", "gpt-5.5", "gpt-5.5"),
        ("openai-responses", "gpt-5.5", "gpt-5.5"),
        ("google.generative-ai", "gemini-2.5-flash", "gemini-2.5-flash"),
    ],
)
def test_provider_prefixes_and_sdk_provider_names_find_the_providers_model(
    provider: str | None, model: str, same_as: str
) -> None:
    catalog = bundled_catalog()
    family = {"claude": "anthropic", "gpt": "openai", "gemini": "gemini"}[same_as.split("-")[0]]
    assert catalog.lookup(provider, model) == catalog.lookup(family, same_as)


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("bedrock", "anthropic.claude-3-5-sonnet-20241022-v2:0"),
        (None, "anthropic.claude-3-5-sonnet-20241022-v2:0"),
        (None, "us.anthropic.claude-3-5-sonnet-20241022-v2:0"),
        ("amazon-bedrock", "eu.anthropic.claude-3-5-sonnet-20241022-v2:0"),
        ("aws", "anthropic.claude-3-5-sonnet-20241022-v2:0"),
        (None, "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20241022-v2:0"),
    ],
)
def test_bedrock_spellings_are_priced_as_bedrock_with_the_models_limits(provider: str | None, model: str) -> None:
    catalog = bundled_catalog()
    found = catalog.lookup(provider, model)
    direct = catalog.lookup("anthropic", "claude-3-5-sonnet-20241022")
    assert found is not None and direct is not None
    assert found.provider == "aws"
    assert "claude-3-5-sonnet" in found.model_id
    assert (found.context_window, found.max_output_tokens) == (direct.context_window, direct.max_output_tokens)
    assert found.pricing is not None


@pytest.mark.parametrize(
    ("provider", "model", "model_id"),
    [
        ("google-vertex", "claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"),
        ("vertex", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        (None, "claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("google.vertex.anthropic.messages", "claude-opus-4-7@default", "claude-opus-4-7"),
        ("google-vertex", "gemini-2.5-pro", "gemini-2.5-pro"),
    ],
)
def test_vertex_spellings_are_priced_as_vertex(provider: str | None, model: str, model_id: str) -> None:
    found = bundled_catalog().lookup(provider, model)
    assert found is not None
    assert (found.provider, found.model_id) == ("google", model_id)
    assert found.context_window is not None and found.max_output_tokens is not None


def test_a_latest_alias_finds_its_model() -> None:
    catalog = bundled_catalog()
    latest = catalog.lookup("anthropic", "claude-3-5-sonnet-latest")
    assert latest is not None
    assert latest.model_id == "claude-3-5-sonnet"
    flash = catalog.lookup("gemini", "gemini-flash-latest")
    assert flash is not None
    assert flash.model_id.startswith("gemini-") and "flash" in flash.model_id


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "unknown-model-xyz"),
        ("anthropic", "claude-unknown-9"),
        ("vllm", "claude-sonnet-4-5"),
        ("vllm", "Qwen/Qwen2.5-Coder-32B"),
        (None, "Qwen/Qwen2.5-Coder-32B"),
        (None, "qwen-coder"),
        ("ollama", "llama3"),
        ("lmstudio", "qwen/qwen3-coder-30b"),
        (None, "llama-3.3-70b-versatile"),
        (None, "<synthetic>"),
        ("anthropic", ""),
        ("anthropic", None),
    ],
)
def test_an_unknown_model_or_a_self_hosted_provider_falls_through(provider: str | None, model: str | None) -> None:
    assert bundled_catalog().lookup(provider, model) is None


def test_output_limits_come_from_models_dev() -> None:
    catalog = bundled_catalog()
    assert default_max_output_tokens(catalog, "anthropic", "claude-sonnet-4-5-20250929") == 64_000
    assert default_max_output_tokens(catalog, "openai", "gpt-4o") == 16_384
    assert default_max_output_tokens(catalog, "gemini", "gemini-2.5-pro") == 65_536
    assert default_max_output_tokens(catalog, "vllm", "qwen-coder") is None


def test_a_known_window_caps_the_output_reserve_at_half_of_it() -> None:
    catalog = bundled_catalog()
    assert default_max_output_tokens(catalog, "anthropic", "claude-sonnet-4-5", 100_000) == 50_000
    assert default_max_output_tokens(catalog, "anthropic", "claude-sonnet-4-5", 200_000) == 64_000
    assert default_max_output_tokens(catalog, "vllm", "qwen-coder", 100_000) is None


def test_the_catalog_names_the_packages_that_answered() -> None:
    version = bundled_catalog().version
    assert version.startswith("genai-prices ")
    assert ", models-dev " in version


def test_models_devs_exact_window_beats_a_rounded_one() -> None:
    found = small_catalog().lookup("openai", "gpt-test")
    assert found is not None
    assert (found.context_window, found.max_output_tokens) == (1_047_576, 32_768)


def test_a_window_models_dev_lacks_comes_from_the_price_catalog_without_an_output_limit() -> None:
    found = small_catalog().lookup("gemini", "gemini-test")
    assert found is not None
    assert (found.context_window, found.max_output_tokens) == (1_000_000, None)
    assert default_max_output_tokens(small_catalog(), "gemini", "gemini-test") is None


def test_limits_are_found_under_the_dated_spelling_the_caller_used() -> None:
    found = small_catalog().lookup("anthropic", "claude-test-4-20260101")
    assert found is not None
    assert (found.model_id, found.max_output_tokens) == ("claude-test-4", 64_000)


def test_a_model_only_models_dev_lists_has_limits_and_no_price() -> None:
    found = small_catalog().lookup("openai", "gpt-listed-only")
    assert found is not None
    assert (found.provider, found.model_id, found.context_window, found.pricing) == (
        "openai",
        "gpt-listed-only",
        128_000,
        None,
    )


def test_lookups_are_remembered_and_stay_correct_past_the_memo_size() -> None:
    catalog = small_catalog()
    first = catalog.lookup("openai", "gpt-test")
    for n in range(5_000):
        catalog.lookup("openai", f"gpt-unknown-{n}")
    assert catalog.lookup("openai", "gpt-test") == first


def test_model_reference_peels_provider_spellings() -> None:
    assert model_reference("bedrock", "us.anthropic.claude-3-5-sonnet-20241022-v2:0") == model_reference(
        None, "us.anthropic.claude-3-5-sonnet-20241022-v2:0"
    )
    reference = model_reference(None, "claude-3-5-sonnet-v2@20241022")
    assert reference is not None
    assert reference.family == "vertex"
    assert reference.spellings == (
        "claude-3-5-sonnet-v2@20241022",
        "claude-3-5-sonnet-20241022",
        "claude-3-5-sonnet",
    )
    assert model_reference(None, "gpt-4.1") == model_reference(None, "GPT-4.1 ")
    assert model_reference("vllm", "anything") is None


@pytest.mark.parametrize(
    ("provider", "family"),
    [
        ("anthropic", "anthropic"),
        ("anthropic.messages", "anthropic"),
        ("openai-responses", "openai"),
        ("openai.chat", "openai"),
        ("gemini", "google"),
        ("google.generative-ai", "google"),
        ("google-vertex-anthropic", "vertex"),
        ("vertex_ai", "vertex"),
        ("amazon-bedrock", "aws"),
        ("azure-openai", "azure"),
        ("ai-sdk", None),
        ("vllm", ""),
        ("ollama", ""),
    ],
)
def test_provider_names_map_to_catalog_families(provider: str, family: str | None) -> None:
    assert provider_family(provider) == family


@pytest.mark.parametrize(
    ("provider", "model", "readable"),
    [
        ("openai", "o3-mini", ("text/*",)),
        ("ai-sdk", "openai/gpt-3.5-turbo", ("text/*",)),
        ("openai", "gpt-4o", None),
        ("anthropic", "claude-sonnet-4-5-20250929", None),
        ("vllm", "o3-mini", None),
        ("openai", "gpt-unknown-to-both", None),
    ],
)
def test_only_a_model_listed_as_reading_no_images_or_pdfs_limits_the_media_sent(
    provider: str, model: str, readable: tuple[str, ...] | None
) -> None:
    assert readable_media(bundled_catalog(), provider, model) == readable
