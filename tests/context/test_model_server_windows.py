"""The window client against a real HTTP server on a loopback port: every failure falls through."""

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.context.config import ModelServer, SummarizerConfig, Timeouts, WindowConfig
from app.context.model_server import ModelServerWindows, models_url, windows_from_listing
from tests.context.catalogs import CURRENT_MODELS, small_catalog
from tests.context.fake_model_server import MODELS_PATH, FakeModelServer, Reply, unused_base_url

TINY = Timeouts(connect_seconds=0.2, read_seconds=0.05, total_seconds=0.1)
"""Only for held answers: anything real must not race these, so every other test uses ROOMY."""
ROOMY = Timeouts(connect_seconds=5.0, read_seconds=5.0, total_seconds=10.0)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def config(base_url: str, **overrides: Any) -> WindowConfig:
    """The tests' configuration with ``overrides`` (``WindowConfig`` fields) replacing its values."""
    tested = WindowConfig(
        servers_by_provider={"vllm": ModelServer(base_url)},
        context_window_tokens={"qwen-coder": 16_000},
        ttl_seconds=60.0,
        failure_ttl_seconds=10.0,
        timeouts=ROOMY,
    )
    return dataclasses.replace(tested, **overrides)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def windows(model_server: FakeModelServer, clock: Clock) -> AsyncIterator[ModelServerWindows]:
    probe = ModelServerWindows(config(model_server.base_url), clock=clock)
    yield probe
    await probe.aclose()


async def test_server_max_model_len_wins(windows: ModelServerWindows) -> None:
    window = await windows.resolve("vllm", "qwen-coder", session_tokens=100_000)
    assert (window.tokens, window.source, window.notes) == (32_768, "model_server", ())


async def test_base_url_with_v1_suffix_reaches_the_same_endpoint(model_server: FakeModelServer) -> None:
    probe = ModelServerWindows(config(f"{model_server.base_url}/v1/"))
    try:
        assert (await probe.lookup("vllm", "qwen-coder")).tokens == 32_768
    finally:
        await probe.aclose()
    assert [r.path for r in model_server.requests] == [MODELS_PATH]


async def test_api_key_is_sent_as_bearer(model_server: FakeModelServer) -> None:
    cfg = config("unused", servers_by_provider={"vllm": ModelServer(model_server.base_url, "sk-local")})
    probe = ModelServerWindows(cfg)
    try:
        await probe.lookup("vllm", "qwen-coder")
    finally:
        await probe.aclose()
    assert model_server.requests[0].headers["authorization"] == "Bearer sk-local"


async def test_per_model_server_beats_the_provider_server(model_server: FakeModelServer) -> None:
    cfg = config(unused_base_url(), servers_by_model={"vllm/qwen-coder": ModelServer(model_server.base_url)})
    probe = ModelServerWindows(cfg)
    try:
        assert (await probe.lookup("vllm", "qwen-coder")).tokens == 32_768
    finally:
        await probe.aclose()


async def test_answers_are_cached_until_the_ttl_expires(
    windows: ModelServerWindows, model_server: FakeModelServer, clock: Clock
) -> None:
    await windows.lookup("vllm", "qwen-coder")
    model_server.serve_models({"qwen-coder": 131_072})
    clock.now += 59.9
    assert (await windows.lookup("vllm", "qwen-coder")).tokens == 32_768
    clock.now += 0.1
    assert (await windows.lookup("vllm", "qwen-coder")).tokens == 131_072
    assert len(model_server.requests_to(MODELS_PATH)) == 2


async def test_one_listing_answers_every_model_of_the_server(
    windows: ModelServerWindows, model_server: FakeModelServer
) -> None:
    model_server.serve_models({"qwen-coder": 32_768, "llama": 8_192})
    assert (await windows.lookup("vllm", "qwen-coder")).tokens == 32_768
    assert (await windows.lookup("vllm", "llama")).tokens == 8_192
    assert len(model_server.requests_to(MODELS_PATH)) == 1


async def test_concurrent_lookups_share_one_request(windows: ModelServerWindows, model_server: FakeModelServer) -> None:
    answers = await asyncio.gather(*(windows.lookup("vllm", "qwen-coder") for _ in range(10)))
    assert {answer.tokens for answer in answers} == {32_768}
    assert len(model_server.requests_to(MODELS_PATH)) == 1


async def test_slow_server_falls_through_to_configured_window(model_server: FakeModelServer) -> None:
    model_server.hang(MODELS_PATH)
    probe = ModelServerWindows(config(model_server.base_url, timeouts=TINY))
    try:
        window = await probe.resolve("vllm", "qwen-coder", session_tokens=None)
    finally:
        await probe.aclose()
    assert (window.tokens, window.source) == (16_000, "model_config")
    assert "gave no window" in window.notes[0]


async def test_garbage_answer_falls_through(windows: ModelServerWindows, model_server: FakeModelServer) -> None:
    model_server.garbage(MODELS_PATH)
    window = await windows.resolve("vllm", "qwen-coder", session_tokens=None)
    assert window.source == "model_config"
    assert "unreadable answer" in window.notes[0]


async def test_error_status_falls_through(windows: ModelServerWindows, model_server: FakeModelServer) -> None:
    model_server.fail(MODELS_PATH, 500)
    window = await windows.resolve("vllm", "qwen-coder", session_tokens=None)
    assert window.source == "model_config"
    assert "HTTP 500" in window.notes[0]


async def test_json_without_a_model_list_falls_through(
    windows: ModelServerWindows, model_server: FakeModelServer
) -> None:
    model_server.reply(MODELS_PATH, Reply(json={"object": "list"}))
    window = await windows.resolve("vllm", "qwen-coder", session_tokens=None)
    assert window.source == "model_config"


async def test_missing_max_model_len_falls_through_to_the_session(
    windows: ModelServerWindows, model_server: FakeModelServer
) -> None:
    model_server.serve_models({"qwen-coder": None})
    window = await windows.resolve("vllm", "other-model", session_tokens=12_000)
    assert (window.tokens, window.source) == (12_000, "session")
    window = await windows.resolve("vllm", "qwen-coder", session_tokens=12_000)
    assert window.source == "model_config"
    assert "without max_model_len" in window.notes[0]


async def test_unlisted_model_falls_through(windows: ModelServerWindows) -> None:
    answer = await windows.lookup("vllm", "not-served")
    assert answer.tokens is None
    assert "does not list" in (answer.problem or "")


async def test_refused_connection_falls_through() -> None:
    probe = ModelServerWindows(config(unused_base_url()))
    try:
        window = await probe.resolve("vllm", "qwen-coder", session_tokens=None)
    finally:
        await probe.aclose()
    assert window.source == "model_config"
    assert "unreachable" in window.notes[0]


async def test_malformed_base_url_falls_through() -> None:
    probe = ModelServerWindows(config("http://gpu:port"))
    try:
        window = await probe.resolve("vllm", "qwen-coder", session_tokens=None)
    finally:
        await probe.aclose()
    assert window.source == "model_config"
    assert "unreachable (InvalidURL" in window.notes[0]


async def test_failure_is_remembered_for_the_failure_ttl_then_retried(
    windows: ModelServerWindows, model_server: FakeModelServer, clock: Clock
) -> None:
    model_server.fail(MODELS_PATH, 503)
    assert (await windows.lookup("vllm", "qwen-coder")).tokens is None
    model_server.serve_models({"qwen-coder": 32_768})
    clock.now += 9.9
    assert (await windows.lookup("vllm", "qwen-coder")).tokens is None
    clock.now += 0.1
    assert (await windows.lookup("vllm", "qwen-coder")).tokens == 32_768
    assert len(model_server.requests_to(MODELS_PATH)) == 2


async def test_no_server_configured_means_no_request_and_no_note() -> None:
    probe = ModelServerWindows(WindowConfig(context_window_tokens={"gpt-4o": 128_000}))
    try:
        window = await probe.resolve("openai", "gpt-4o", session_tokens=None)
    finally:
        await probe.aclose()
    assert (window.tokens, window.source, window.notes) == (128_000, "model_config", ())


async def test_shared_client_is_not_closed_by_the_probe(model_server: FakeModelServer) -> None:
    async with httpx.AsyncClient() as client:
        probe = ModelServerWindows(config(model_server.base_url), client=client)
        await probe.aclose()
        assert (await probe.lookup("vllm", "qwen-coder")).tokens == 32_768


def test_listing_shapes_other_than_vllm_are_read() -> None:
    assert windows_from_listing({"data": [{"id": "a", "context_length": 200_000}]}) == {"a": 200_000}
    assert windows_from_listing([{"name": "b", "max_context_length": 4096}]) == {"b": 4096}
    assert windows_from_listing({"models": [{"id": "c", "max_model_len": "8192"}]}) == {"c": 8192}
    assert windows_from_listing({"data": [{"id": "d", "max_model_len": True}, "junk"]}) == {"d": None}
    assert windows_from_listing({"data": [{"id": "e", "max_model_len": "²"}]}) == {"e": None}


def test_listing_matches_a_model_by_its_root_too() -> None:
    listing = {"data": [{"id": "coder", "root": "Qwen/Qwen2.5-Coder-32B", "max_model_len": 32_768}]}
    assert windows_from_listing(listing)["Qwen/Qwen2.5-Coder-32B"] == 32_768


def test_models_url_accepts_bases_with_and_without_v1() -> None:
    assert models_url("http://h:8000") == "http://h:8000/v1/models"
    assert models_url("http://h:8000/v1/") == "http://h:8000/v1/models"


async def test_a_model_no_server_config_or_session_knows_gets_the_catalogs_window() -> None:
    probe = ModelServerWindows(WindowConfig(), catalog=small_catalog())
    try:
        window = await probe.resolve("openai", "gpt-test", session_tokens=None)
    finally:
        await probe.aclose()
    assert (window.tokens, window.source, window.notes) == (1_047_576, "catalog", ())


async def test_the_server_the_configuration_and_the_session_beat_the_catalog(model_server: FakeModelServer) -> None:
    cfg = config(model_server.base_url, servers_by_provider={"openai": ModelServer(model_server.base_url)})
    model_server.serve_models({"gpt-test": 32_768})
    probe = ModelServerWindows(cfg, catalog=small_catalog())
    try:
        assert (await probe.resolve("openai", "gpt-test", session_tokens=None)).source == "model_server"
        assert (await probe.resolve("vllm", "qwen-coder", session_tokens=None)).source == "model_config"
        assert (await probe.resolve("anthropic", "claude-test-4", session_tokens=9_000)).source == "session"
        assert (await probe.resolve("anthropic", "claude-test-4", session_tokens=None)).source == "catalog"
    finally:
        await probe.aclose()


@pytest.mark.parametrize(("provider", "model"), CURRENT_MODELS)
async def test_every_current_model_resolves_a_catalog_window_without_configuration(provider: str, model: str) -> None:
    probe = ModelServerWindows(WindowConfig())
    try:
        window = await probe.resolve(provider, model, session_tokens=None)
    finally:
        await probe.aclose()
    assert window.source == "catalog"
    assert window.tokens is not None and window.tokens >= 128_000


async def test_a_self_hosted_model_still_goes_without_a_window() -> None:
    probe = ModelServerWindows(WindowConfig())
    try:
        window = await probe.resolve("vllm", "claude-sonnet-4-5", session_tokens=None)
    finally:
        await probe.aclose()
    assert window.source == "none"


async def test_the_summarizers_window_is_configured_else_served_else_the_catalogs(
    windows: ModelServerWindows, model_server: FakeModelServer
) -> None:
    served = SummarizerConfig(ModelServer(model_server.base_url), "qwen-coder")
    assert await windows.summarizer_window(served) == 32_768
    assert await windows.summarizer_window(dataclasses.replace(served, context_window_tokens=8_000)) == 8_000
    known = SummarizerConfig(ModelServer(model_server.base_url), "claude-haiku-4-5")
    assert await windows.summarizer_window(known) == 200_000
    assert await windows.summarizer_window(SummarizerConfig(ModelServer(unused_base_url()), "unknown")) is None


async def test_a_servers_credentials_never_reach_a_note(model_server: FakeModelServer) -> None:
    listed = model_server.base_url.replace("http://", "http://admin:hunter2@")
    unreachable = unused_base_url().replace("http://", "http://admin:hunter2@")
    for base_url, model in ((listed, "not-served"), (unreachable, "qwen-coder")):
        probe = ModelServerWindows(config(base_url, timeouts=ROOMY))
        try:
            answer = await probe.lookup("vllm", model)
        finally:
            await probe.aclose()
        assert answer.tokens is None and answer.notes
        assert "hunter2" not in f"{answer.url} {answer.notes}" and "admin" not in f"{answer.url} {answer.notes}"
