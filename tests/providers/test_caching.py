"""Cache breakpoints: where each target is asked to cache, and what it refuses."""

from typing import Any

import orjson
import pytest

from app.engine.promotion import promote
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from app.providers.caching import (
    AUTO,
    NO_CACHE,
    CacheTarget,
    CannotResume,
    InvalidCache,
    measure_prefix,
    min_cacheable_tokens,
    parse_cache,
    prompt_cache_key,
)
from app.providers.chat_request import ChatRequest, build_chat_request, draft_chat_request, finish_chat_request
from tests import builders as b
from tests.providers.payload_check import problems

TOOLS = [
    {"name": "Read", "description": "Read a file", "inputSchema": {"type": "object"}},
    {"name": "Bash", "description": "Run a command. " + "y" * 6000, "inputSchema": {"type": "object"}},
]
"""Long enough (1,500 tokens) to be cached on their own."""
LONG = "x" * 8000
"""About 2,000 tokens: over the 1,024 most Claude models need before anything is cached."""


def _history(*, summary: bool = False) -> list[Any]:
    messages = []
    if summary:
        messages += [b.boundary("m1"), b.summary("m1", "We fixed the login bug. " + LONG)]
    messages += [
        b.user("fix it " + LONG),
        b.reasoning("thinking", signature=b.SIGNATURE),
        b.tool_call("c1", "Read", path="a.ts"),
        b.tool_result("c1", "contents " + LONG),
        b.assistant("done"),
        b.user("thanks"),
    ]
    history = b.history(*messages)
    return [promote(message) for message in history]


def _build(
    provider: str, model: str, cache: CacheTarget | None, *, summary: bool = False, **kwargs: Any
) -> ChatRequest:
    ctx = ProjectionContext(provider=provider, model=model)
    view = project(View.MODEL, _history(summary=summary), ctx)
    return build_chat_request(view, provider=provider, model=model, tools=TOOLS, cache=cache, **kwargs)


def _marks(value: Any, key: str = "cache_control") -> list[Any]:
    found: list[Any] = []
    if isinstance(value, dict):
        if key in value:
            found.append(value)
        for item in value.values():
            found += _marks(item, key)
    elif isinstance(value, list):
        for item in value:
            found += _marks(item, key)
    return found


def test_auto_marks_tools_system_summary_and_the_settled_history_for_anthropic() -> None:
    built = _build("anthropic", "claude-sonnet-4-5", CacheTarget(AUTO), summary=True, system="Rules. " + LONG)
    payload = built.payload
    assert built.breakpoints == ["tools", "system", "summary", "history"]
    assert payload["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in payload["tools"][0]
    assert payload["system"] == [{"type": "text", "text": "Rules. " + LONG, "cache_control": {"type": "ephemeral"}}]
    summary_block = payload["messages"][0]["content"][0]
    assert "<summary>" in summary_block["text"] and summary_block["cache_control"] == {"type": "ephemeral"}
    # Four at most: the summary's mark leaves the history the settled prefix's end (a later message may join
    # the newest prompt), not the request's.
    assert payload["messages"][-2]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in payload["messages"][-1]["content"][-1]
    assert len(_marks(payload)) == 4
    assert problems("anthropic", payload, model="claude-sonnet-4-5") == []


def test_a_tail_that_does_not_answer_the_last_turn_is_left_unmarked() -> None:
    """A prefill (or a made-up "Continue") changes in the next request: the mark ends the settled prefix."""
    view = project(View.MODEL, _history()[:-1], ProjectionContext(provider="anthropic", model="claude-sonnet-4-5"))
    built = build_chat_request(
        view, provider="anthropic", model="claude-sonnet-4-5", tools=TOOLS, cache=CacheTarget(AUTO)
    )
    messages = built.payload["messages"]
    assert messages[-1]["role"] == "user" and messages[-2]["content"][-1]["text"] == "done"
    assert "cache_control" not in messages[-1]["content"][-1]
    assert "cache_control" not in messages[-2]["content"][-1]
    assert built.breakpoints == ["tools", "history"]


def parallel_reads(turns: int, calls: int) -> list[Any]:
    """A prompt, then ``turns`` turns of ``calls`` parallel reads each, answered."""
    messages: list[Any] = [b.user("read everything " + LONG)]
    for turn in range(turns):
        ids = [f"c{turn}_{k}" for k in range(calls)]
        messages.append(b.tool_calls(*(b.call_part(call_id, "Read", {"path": f"{call_id}.ts"}) for call_id in ids)))
        messages += [b.tool_result(call_id, "contents") for call_id in ids]
    return [promote(message) for message in b.history(*messages)]


def test_the_history_marks_end_the_settled_prefix_and_the_request() -> None:
    """What a turn adds is written once and read by the next; the settled end survives a user message merging
    into the last unit, and keeps the look-back from the next request's marks short."""
    view = project(
        View.MODEL, parallel_reads(2, 12), ProjectionContext(provider="anthropic", model="claude-sonnet-4-5")
    )
    built = build_chat_request(
        view, provider="anthropic", model="claude-sonnet-4-5", tools=TOOLS, cache=CacheTarget(AUTO)
    )
    messages = built.payload["messages"]
    assert built.breakpoints == ["tools", "history", "history"]
    assert [n for n, message in enumerate(messages) if _marks(message)] == [len(messages) - 2, len(messages) - 1]
    assert problems("anthropic", built.payload, model="claude-sonnet-4-5") == []


def test_no_mark_goes_on_a_thinking_block_or_below_the_minimum_length() -> None:
    short = project(
        View.MODEL, [promote(m) for m in b.history(b.user("hi"), b.assistant("yo"), b.user("ok"))], ProjectionContext()
    )
    built = build_chat_request(short, provider="anthropic", model="claude-sonnet-4-5", cache=CacheTarget(AUTO))
    assert built.breakpoints == [] and _marks(built.payload) == []
    every = _build("anthropic", "claude-sonnet-4-5", CacheTarget(AUTO, min_tokens=0))
    assert all(mark.get("type") not in ("thinking", "redacted_thinking") for mark in _marks(every.payload))


def test_the_minimum_cacheable_length_follows_the_model_family() -> None:
    assert min_cacheable_tokens("claude-sonnet-4-5-20250929") == 1024
    assert min_cacheable_tokens("claude-3-5-haiku-latest") == 2048
    assert min_cacheable_tokens("claude-haiku-4-5") == 4096
    assert min_cacheable_tokens("anthropic/claude-opus-4-5") == 4096
    assert min_cacheable_tokens("claude-opus-4-1") == 1024


def test_an_hour_ttl_marks_every_breakpoint_with_it() -> None:
    policy = parse_cache({"ttl": "1h", "breakpoints": ["history"]})
    built = _build("anthropic", "claude-sonnet-4-5", CacheTarget(policy))
    assert built.breakpoints == ["history", "history"]
    assert [mark["cache_control"] for mark in _marks(built.payload)] == [{"type": "ephemeral", "ttl": "1h"}] * 2


def test_none_marks_nothing_and_leaves_the_system_a_string() -> None:
    built = _build("anthropic", "claude-sonnet-4-5", CacheTarget(NO_CACHE), system="Rules. " + LONG)
    assert _marks(built.payload) == [] and isinstance(built.payload["system"], str)


def test_the_ai_sdk_marks_claude_through_provider_options() -> None:
    built = _build("ai-sdk", "anthropic/claude-sonnet-4-5", CacheTarget(AUTO), system="Rules. " + LONG)
    payload = built.payload
    assert built.breakpoints == ["tools", "system", "history", "history"]
    mark = {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
    assert payload["tools"]["Bash"]["providerOptions"] == mark
    assert payload["system"] == [{"role": "system", "content": "Rules. " + LONG, "providerOptions": mark}]
    assert problems("ai-sdk", payload) == []
    other = _build("ai-sdk", "openai/gpt-5", CacheTarget(AUTO))
    assert other.breakpoints == [] and "providerOptions" not in str(other.payload)


def test_openai_gets_a_keyed_prompt_cache_key() -> None:
    key = prompt_cache_key(b"secret", "tenant", "s1")
    for provider in ("openai", "openai-responses"):
        built = _build(provider, "gpt-5", CacheTarget(AUTO, cache_key=key))
        assert built.payload["prompt_cache_key"] == key
        assert problems(provider, built.payload) == []
    assert key != prompt_cache_key(b"other", "tenant", "s1") != prompt_cache_key(b"secret", "tenant", "s2")
    assert "s1" not in key


def test_gemini_leaves_the_system_instruction_and_tools_to_an_explicit_cached_content() -> None:
    """Gemini refuses them beside ``cachedContent``, which holds the ones it was created with."""
    policy = parse_cache({"cachedContent": "cachedContents/abc", "breakpoints": []})
    built = _build("gemini", "gemini-2.5-pro", CacheTarget(policy), system="Rules.")
    payload = built.payload
    assert payload["cachedContent"] == "cachedContents/abc"
    assert "systemInstruction" not in payload and "tools" not in payload
    [left] = [repair for repair in built.diagnostics.repairs if repair.rule == "left-to-cached-content"]
    assert "system instruction" in left.detail and "tools" in left.detail
    assert problems("gemini", payload, model="gemini-2.5-pro") == []
    plain = _build("gemini", "gemini-2.5-pro", CacheTarget(AUTO), system="Rules.").payload
    assert "cachedContent" not in plain and {"systemInstruction", "tools"} <= set(plain)


@pytest.mark.parametrize(
    ("provider", "model", "value"),
    [
        ("gemini", "gemini-2.5-pro", {"cachedContent": "cachedContents/abc"}),
        ("openai", "gpt-5", {}),
        ("ai-sdk", "openai/gpt-5", {}),
    ],
)
def test_breakpoints_left_out_ask_none_of_a_target_that_takes_none(provider: str, model: str, value: object) -> None:
    """The default breakpoints are all four where a target takes them: a default never makes a request fail."""
    built = _build(provider, model, CacheTarget(parse_cache(value)))
    assert built.breakpoints == []
    assert _marks(built.payload) == [] and _marks(built.payload, "cacheControl") == []


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"ttl": "2h"}, "cache.ttl"),
        ({"breakpoints": ["messages"]}, "cache.breakpoints"),
        ({"breakpoints": "history"}, "cache.breakpoints"),
        ({"color": "blue"}, "cache.color"),
        ("sometimes", "cache"),
        ({"cachedContent": ""}, "cache.cachedContent"),
    ],
)
def test_a_malformed_cache_names_its_field(value: object, field: str) -> None:
    with pytest.raises(InvalidCache) as raised:
        parse_cache(value)
    assert raised.value.extensions["field"] == field


@pytest.mark.parametrize(
    ("provider", "model", "value", "field"),
    [
        ("openai", "gpt-5", {"breakpoints": ["history"]}, "cache.breakpoints"),
        ("gemini", "gemini-2.5-pro", {"ttl": "1h", "breakpoints": []}, "cache.ttl"),
        ("ai-sdk", "openai/gpt-5", {"breakpoints": ["system"]}, "cache.breakpoints"),
        ("anthropic", "claude-sonnet-4-5", {"cachedContent": "cachedContents/x"}, "cache.cachedContent"),
    ],
)
def test_breakpoints_a_target_cannot_take_are_refused(provider: str, model: str, value: object, field: str) -> None:
    with pytest.raises(InvalidCache) as raised:
        _build(provider, model, CacheTarget(parse_cache(value)))
    assert raised.value.extensions["field"] == field


def test_finishing_a_draft_marks_copies_and_leaves_the_draft_as_it_was() -> None:
    """A later turn splices the units of this turn's draft: a cache mark must never reach them."""
    model = "claude-sonnet-4-5"
    view = project(View.MODEL, _history(summary=True), ProjectionContext(provider="anthropic", model=model))
    draft = draft_chat_request(view, provider="anthropic", model=model, system=LONG, tools=TOOLS)
    before = orjson.dumps(draft.payload)
    first = finish_chat_request(draft, cache=CacheTarget(AUTO)).request
    second = finish_chat_request(draft, cache=CacheTarget(AUTO)).request
    assert first.breakpoints == ["tools", "system", "summary", "history"]
    assert orjson.dumps(draft.payload) == before
    assert orjson.dumps(first.payload) == orjson.dumps(second.payload) != before


def test_a_measure_resumed_after_kept_units_gives_the_whole_measure() -> None:
    """A later turn measures only the units after the ones an earlier measure kept; a point before them (a
    previous prefix another process remembered) cannot be read off a resume."""
    built = _build("anthropic", "claude-sonnet-4-5", None, summary=True)
    payload = built.payload
    whole = measure_prefix("anthropic", payload, 5, keep_at=3)
    assert whole.resume is not None and whole.resume.units == 3
    resumed = measure_prefix("anthropic", payload, 5, resume=whole.resume)
    assert resumed.prefix == whole.prefix and resumed.unit_lengths == whole.unit_lengths
    earlier = measure_prefix("anthropic", payload, 2).prefix
    with pytest.raises(CannotResume):
        measure_prefix("anthropic", payload, 5, resume=whole.resume, previous=earlier)
    assert measure_prefix("anthropic", payload, 5, previous=earlier).unchanged is True
