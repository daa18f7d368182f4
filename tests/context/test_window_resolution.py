from collections.abc import Mapping

from app.context.window import ContextWindow, resolve_window

CONFIGURED = {"vllm/qwen-coder": 65_536, "qwen-coder": 40_000, "llama": 8_192}


def resolve(
    *,
    provider: str | None = "vllm",
    model: str | None = "qwen-coder",
    server_tokens: int | None = None,
    configured: Mapping[str, int] = CONFIGURED,
    session_tokens: int | None = None,
    server_notes: tuple[str, ...] = (),
    catalog_tokens: int | None = None,
) -> ContextWindow:
    return resolve_window(
        provider=provider,
        model=model,
        server_tokens=server_tokens,
        configured=configured,
        session_tokens=session_tokens,
        server_notes=server_notes,
        catalog_tokens=catalog_tokens,
    )


def test_server_window_beats_configured_and_session() -> None:
    window = resolve(server_tokens=32_768, session_tokens=100_000)
    assert (window.tokens, window.source) == (32_768, "model_server")


def test_configured_window_is_used_when_the_server_gives_none() -> None:
    window = resolve(session_tokens=100_000)
    assert (window.tokens, window.source) == (65_536, "model_config")


def test_configured_key_with_provider_beats_bare_model_id() -> None:
    assert resolve().tokens == 65_536
    assert resolve(provider="other").tokens == 40_000
    assert resolve(provider=None).tokens == 40_000


def test_session_window_is_used_when_nothing_is_configured() -> None:
    window = resolve(model="unknown", session_tokens=100_000)
    assert (window.tokens, window.source) == (100_000, "session")


def test_no_window_means_source_none_and_says_compaction_is_never_proposed() -> None:
    window = resolve(model="unknown")
    assert (window.tokens, window.source) == (None, "none")
    assert any("never proposed" in note for note in window.notes)


def test_no_model_falls_to_the_session_window() -> None:
    assert resolve(model=None, session_tokens=9_000).source == "session"


def test_server_notes_are_carried_to_whichever_source_wins() -> None:
    window = resolve(server_notes=("model server http://x/v1/models gave no window: HTTP 500",))
    assert window.source == "model_config"
    assert window.notes == ("model server http://x/v1/models gave no window: HTTP 500",)


def test_non_positive_values_are_skipped_with_a_note() -> None:
    window = resolve(server_tokens=0, configured={"vllm/qwen-coder": -1, "qwen-coder": 0}, session_tokens=4_096)
    assert (window.tokens, window.source) == (4_096, "session")
    assert len(window.notes) == 3


def test_a_boolean_is_not_a_window() -> None:
    window = resolve(model="unknown", session_tokens=True)
    assert window.source == "none"


def test_window_serialises_with_its_source() -> None:
    assert resolve().as_dict() == {"tokens": 65_536, "source": "model_config", "notes": []}


def test_catalog_window_is_used_when_nothing_else_knows_the_model() -> None:
    window = resolve(model="unknown", catalog_tokens=200_000)
    assert (window.tokens, window.source) == (200_000, "catalog")


def test_session_window_beats_the_catalog() -> None:
    window = resolve(model="unknown", session_tokens=100_000, catalog_tokens=200_000)
    assert (window.tokens, window.source) == (100_000, "session")


def test_configured_and_server_windows_beat_the_catalog() -> None:
    assert resolve(catalog_tokens=200_000).source == "model_config"
    assert resolve(server_tokens=32_768, catalog_tokens=200_000).source == "model_server"


def test_a_non_positive_catalog_window_is_no_window() -> None:
    assert resolve(model="unknown", catalog_tokens=0).source == "none"


def test_notes_on_skipped_sources_are_kept_when_the_catalog_answers() -> None:
    window = resolve(model="unknown", session_tokens=0, catalog_tokens=200_000)
    assert window.source == "catalog"
    assert window.notes == ("session contextWindowTokens is not positive (0); ignored",)
