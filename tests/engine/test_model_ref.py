"""Model references: every form a runtime writes reads as the same model."""

import pytest

from app.engine.model_ref import ModelRef, model_ref, producer, provider_family, same_model, same_producer, target_ref


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("anthropic/claude-sonnet-4-5", ModelRef("anthropic", "claude-sonnet-4-5")),
        ("claude-sonnet-4-5", ModelRef(None, "claude-sonnet-4-5")),
        ("openrouter/anthropic/claude-sonnet-4.5", ModelRef("openrouter", "anthropic/claude-sonnet-4.5")),
        ("models/gemini-2.5-pro", ModelRef(None, "gemini-2.5-pro")),
        ({"providerID": "openai", "modelID": "gpt-5", "variant": "high"}, ModelRef("openai", "gpt-5", "high")),
        ({"providerID": "google", "id": "gemini-3-pro-preview"}, ModelRef("google", "gemini-3-pro-preview")),
        ("  ", None),
        ({"providerID": "openai"}, None),
        (7, None),
    ],
)
def test_each_written_form_reads_as_its_reference(written: object, read: ModelRef | None) -> None:
    assert model_ref(written) == read


@pytest.mark.parametrize(
    ("provider", "family"),
    [
        ("gemini", "google"),
        ("google-vertex", "google"),
        ("google.generative-ai", "google"),
        ("openai-responses", "openai"),
        ("azure", "openai"),
        ("google.vertex.anthropic.messages", "anthropic"),
        ("amazon-bedrock", "amazon-bedrock"),
        ("", None),
    ],
)
def test_provider_names_of_one_api_are_one_family(provider: str, family: str | None) -> None:
    assert provider_family(provider) == family


def test_the_producer_is_the_messages_own_model_else_its_runs() -> None:
    assert producer({"provider": "anthropic", "model": "claude-sonnet-4-5"}) == ModelRef(
        "anthropic", "claude-sonnet-4-5"
    )
    assert producer({"model": "anthropic/claude-sonnet-4-5"}, "openai/gpt-5") == ModelRef(
        "anthropic", "claude-sonnet-4-5"
    )
    assert producer({}, {"providerID": "openai", "modelID": "gpt-5"}) == ModelRef("openai", "gpt-5")
    assert producer({"provider": "anthropic"}, "claude-sonnet-4-5") == ModelRef("anthropic", "claude-sonnet-4-5")
    assert producer({"provider": "anthropic"}) == ModelRef("anthropic", None)
    assert producer({}) is None


def test_usage_asks_for_the_model_reasoning_for_the_model_at_its_provider() -> None:
    run = model_ref("anthropic/claude-sonnet-4-5")
    assert same_model(run, target_ref(None, "claude-sonnet-4-5"))
    assert same_producer(run, target_ref("anthropic", "claude-sonnet-4-5"))
    assert same_producer(model_ref("google/gemini-2.5-pro"), target_ref("gemini", "gemini-2.5-pro"))
    assert not same_producer(model_ref("claude-sonnet-4-5"), target_ref("anthropic", "claude-sonnet-4-5"))
    assert not same_producer(run, target_ref("ai-sdk", "claude-sonnet-4-5"))
    assert same_producer(run, target_ref("ai-sdk", "anthropic/claude-sonnet-4-5"))


@pytest.mark.parametrize(
    ("produced", "target", "same"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", True),
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", True),
        ("gpt-4o-2024-08-06", "gpt-4o", True),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet-latest", True),
        ("claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022", False),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4", False),
        ("gpt-4o-mini-2024-07-18", "gpt-4o", False),
    ],
)
def test_an_alias_and_the_snapshot_it_names_are_one_model(produced: str, target: str, same: bool) -> None:
    """Providers answer a request for an alias with the dated id: the usage they report counts for the alias."""
    assert same_model(model_ref(produced), target_ref("anthropic", target)) is same
    assert same_producer(model_ref(f"anthropic/{produced}"), target_ref("anthropic", target)) is same
