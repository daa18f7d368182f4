"""Random histories give payloads every provider accepts, as far as its published types and rules can tell.

The histories come from the shared strategies (interrupted calls, orphan and duplicate results, reused ids,
empty and whitespace texts, images in tool results, foreign reasoning, runtime reminders, compactions), passed
on raw (no model-view rule), then roughened further here: 400-character and unsafe tool-call ids. Unpaired
surrogates and NUL characters come in stored text (marked, as the store marks it) and in the request's text
(system prompt, mutations): no surrogate may reach a payload, and no NUL a target that refuses it. ai-sdk
payloads are collected and checked by the ``ai`` package in one Node call per test.
"""

import copy
from dataclasses import replace
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from app.providers.caching import AUTO, CacheTarget, parse_cache
from app.providers.chat_request import build_chat_request
from app.providers.errors import PrefillRefused
from app.providers.registry import SUPPORTED_PROVIDERS
from app.providers.request_settings import EFFORTS, OutputFormat, RequestSettings, parse_variant
from tests.providers.ai_sdk_preflight import Preflight
from tests.providers.payload_check import problems
from tests.providers.projected import from_engine
from tests.strategies import RUN_MODELS, histories

MODELS = {
    "openai": "gpt-5",
    "openai-responses": "gpt-5",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-3-pro-preview",
    "ai-sdk": "anthropic/claude-sonnet-4-5",
}
TOOLS = [{"name": "Read", "description": "Read a file", "inputSchema": {"type": "object"}}]
LONG = "call_" + "x" * 395


def _roughen_id(call_id: str, how: int) -> str:
    match how:
        case 1:
            return LONG + call_id  # 400+ characters, distinct per call
        case 2:
            return f"functions.{call_id}:0"  # characters Anthropic rejects
        case _:
            return call_id


def _roughen(message: PersistedMessage, how: int) -> PersistedMessage:
    if isinstance(message.content, str):
        return message
    parts: list[dict[str, Any]] = []
    for part in message.content:
        copy = dict(part)
        if "toolCallId" in copy:
            copy["toolCallId"] = _roughen_id(copy["toolCallId"], how)
        parts.append(copy)
    return replace(message, content=parts)


OPENAI_REASONING = {
    "type": "reasoning",
    "text": "plan",
    "providerOptions": {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "enc"}},
}
REDACTED = {"type": "reasoning", "text": "", "providerOptions": {"anthropic": {"redactedData": "opaque=="}}}
EXTRA_PARTS: dict[str, list[dict[str, Any]]] = {
    "user": [
        {"type": "image", "image": "https://example.com/cat.jpg"},
        {"type": "image", "image": "data:image/gif;base64,R0lGODlh"},
        {"type": "file", "data": "AAAA", "mediaType": "application/zip", "filename": "a.zip"},
        {"type": "file", "data": "https://example.com/r.pdf", "mediaType": "application/pdf"},
        {"type": "text", "text": ""},
    ],
    "assistant": [
        OPENAI_REASONING,
        REDACTED,
        {"type": "file", "data": "iVBORw0KGgo=", "mediaType": "image/png"},
        {"type": "tool-call", "toolCallId": "", "toolName": " ", "input": "not json"},
        {"type": "text", "text": "  "},
    ],
    "tool": [
        {
            "type": "tool-result",
            "toolCallId": "call_1",
            "toolName": "Read",
            "output": {"type": "error-json", "value": {"e": 1}},
        },
        {
            "type": "tool-result",
            "toolCallId": "call_2",
            "toolName": "Read",
            "output": {
                "type": "content",
                "value": [
                    {"type": "image-url", "url": "https://example.com/a.png"},
                    {"type": "file-data", "data": "AAAA", "mediaType": "application/zip"},
                    {"type": "text", "text": " "},
                ],
            },
        },
    ],
}


def _spice(message: PersistedMessage, choice: int) -> PersistedMessage:
    """Add one rarer part (URL media, v6 output items, OpenAI or redacted reasoning, broken calls)."""
    options = EXTRA_PARTS.get(message.role, [])
    if not options or choice >= len(options):
        return message
    content = [{"type": "text", "text": message.content}] if isinstance(message.content, str) else message.content
    return replace(message, content=[*content, options[choice]])


rough_histories = st.tuples(histories(), st.integers(0, 2), st.lists(st.integers(0, 9))).map(
    lambda drawn: [
        _spice(_roughen(message, drawn[1]), drawn[2][n] if n < len(drawn[2]) else 99)
        for n, message in enumerate(drawn[0])
    ]
)
FORMAT = OutputFormat({"type": "object", "properties": {"answer": {"type": ["string", "null"]}}, "$id": "x"})
request_settings = st.builds(
    RequestSettings,
    effort=st.sampled_from([None, *EFFORTS, "2048"]).map(parse_variant),
    output=st.sampled_from([None, FORMAT]),
    prefill=st.sampled_from([False, False, True]),
)
"""What a request or its run may ask besides the messages: an effort, a structured answer, a prefill."""


def _built(
    provider: str, projected: Any, settings: RequestSettings, cache: CacheTarget | None = None, **request: Any
) -> dict[str, Any] | None:
    """The payload, or ``None`` where the target refuses the prefill asked of it (a 422, tested on its own).
    ``cache``: ``MARK_ALL`` unless given."""
    try:
        payload = build_chat_request(
            projected, provider=provider, model=MODELS[provider], settings=settings, cache=cache or MARK_ALL, **request
        )
    except PrefillRefused:
        assert settings.prefill
        return None
    found = problems(provider, payload.payload, model=MODELS[provider], prefill=settings.prefill)
    assert found == [], (provider, found, payload.payload)
    return payload.payload


MARK_ALL = CacheTarget(AUTO, min_tokens=0, cache_key="pc_key")
"""Every breakpoint a target takes, however short the prompt, so that every payload is checked with its marks."""
CACHED_CONTENT = CacheTarget(parse_cache({"cachedContent": "cachedContents/abc"}))
"""Gemini's explicit cache, which holds a system instruction and tools of its own."""
MARK_ALL_AN_HOUR = CacheTarget(parse_cache({"ttl": "1h"}), min_tokens=0)
"""``MARK_ALL`` for an hour: Anthropic refuses a 1-hour mark after a 5-minute one."""


def _explicit_cache(provider: str) -> CacheTarget | None:
    """What a request to ``provider`` may ask of the cache besides ``auto``."""
    match provider:
        case "gemini":
            return CACHED_CONTENT
        case "anthropic" | "ai-sdk":
            return MARK_ALL_AN_HOUR
        case _:
            return None


SURROGATE_MUTATIONS = [
    {"op": "append", "parts": [{"type": "text", "text": "also \ud800 this \ud83d\ude00"}]},
    {"op": "prepend", "role": "system", "parts": [{"type": "text", "text": "rule\udc00"}]},
]


def _projected(messages: list[PersistedMessage]) -> list[Any]:
    return from_engine(promote(message) for message in messages)


@settings(max_examples=120)
@given(
    history=rough_histories,
    with_tools=st.booleans(),
    system=st.sampled_from([None, "", "Be brief.", "Be \udfff brief \ud83d\ude00\ud83d"]),
    mutations=st.sampled_from([None, SURROGATE_MUTATIONS]),
    settings=request_settings,
    explicit_cache=st.booleans(),
)
def _every_provider_accepts(
    history: list[PersistedMessage],
    with_tools: bool,
    system: str | None,
    mutations: list[dict[str, Any]] | None,
    settings: RequestSettings,
    explicit_cache: bool,
    collected: list[dict[str, Any]],
) -> None:
    projected = _projected(history)
    if not projected and not system:
        return  # an empty session with no prompt is refused (EmptyConversation), tested on its own
    before = copy.deepcopy(projected)
    for provider in SUPPORTED_PROVIDERS:
        tools = TOOLS if with_tools else None
        cache = _explicit_cache(provider) if explicit_cache else None
        payload = _built(provider, projected, settings, cache, system=system, tools=tools, mutations=mutations)
        if payload is None:
            continue
        orjson.dumps(payload)  # refuses a lone surrogate: none reaches a payload
        assert "newSdkField" not in orjson.dumps(payload).decode(), "a key no provider knows reached a payload"
        if provider == "ai-sdk":
            collected.append(payload)
    assert projected == before, "building payloads must never change the projected messages"


def test_random_histories_give_payloads_every_provider_accepts(ai_sdk_preflight: Preflight) -> None:
    collected: list[dict[str, Any]] = []
    _every_provider_accepts(collected=collected)
    results = ai_sdk_preflight(collected)
    rejected = [(payload, result) for payload, result in zip(collected, results, strict=True) if not result["ok"]]
    assert rejected == [], rejected[:3]
    assert len(collected) > 50


@settings(max_examples=60)
@given(
    history=rough_histories,
    include_reasoning=st.booleans(),
    fallback=st.sampled_from(["drop", "text"]),
    settings=request_settings,
)
def _model_view_payloads_pass(
    history: list[PersistedMessage],
    include_reasoning: bool,
    fallback: str,
    settings: RequestSettings,
    collected: list[dict[str, Any]],
) -> None:
    engine = [promote(message) for message in history]
    for provider in SUPPORTED_PROVIDERS:
        ctx = ProjectionContext(
            provider=provider,
            model=MODELS[provider],
            include_reasoning=include_reasoning,
            reasoning_fallback=fallback,  # type: ignore[arg-type]
            run_models=RUN_MODELS,
        )
        projection = project(View.MODEL, engine, ctx)
        if not projection.messages:
            continue
        payload = _built(provider, projection, settings, tools=TOOLS)
        if payload is not None and provider == "ai-sdk":
            collected.append(payload)


def test_model_view_of_random_histories_gives_payloads_every_provider_accepts(ai_sdk_preflight: Preflight) -> None:
    """The path POST /chat takes: promote, project the model view for the target, serialize, adapt."""
    collected: list[dict[str, Any]] = []
    _model_view_payloads_pass(collected=collected)
    results = ai_sdk_preflight(collected)
    rejected = [(payload, result) for payload, result in zip(collected, results, strict=True) if not result["ok"]]
    assert rejected == [], rejected[:3]
