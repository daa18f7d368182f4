"""Appending turns only extends a payload: its stable prefix comes out byte for byte the same in the next one.

Random histories (interrupted calls, orphans, reused ids, reminders, media, foreign reasoning, compactions)
grow by random turns one batch at a time, as an agent appends them; after every append each target's
payload must start with the previous payload's stable prefix (``app.providers.caching``), tool-id mapping,
repairs, reminder placement and key order included.
"""

from dataclasses import replace
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from app.providers.caching import (
    AUTO,
    CacheTarget,
    history_units,
    stable_units,
    unchanged_prefix,
)
from app.providers.chat_request import ChatRequest, build_chat_request
from app.providers.registry import SUPPORTED_PROVIDERS
from tests import builders as b
from tests.providers.test_payload_properties import MODELS, TOOLS
from tests.strategies import RUN_MODELS, contexts, grown_histories


def _built(
    provider: str, messages: list[PersistedMessage], ctx: ProjectionContext, system: str | None
) -> ChatRequest | None:
    engine = [promote(message) for message in messages]
    ctx = replace(ctx, provider=provider, model=MODELS[provider], run_models=RUN_MODELS)
    view = project(View.MODEL, engine, ctx)
    if not view.messages and not system:
        return None
    return build_chat_request(view, provider=provider, model=MODELS[provider], system=system, tools=TOOLS)


def _payload(
    provider: str, messages: list[PersistedMessage], ctx: ProjectionContext, system: str | None
) -> dict[str, Any] | None:
    built = _built(provider, messages, ctx, system)
    return None if built is None else built.payload


def _head_and_units(provider: str, payload: dict[str, Any], units: int) -> list[bytes]:
    """What the prefix covers, piece by piece, to name the first piece that differs."""
    head = [orjson.dumps(payload.get(key)) for key in ("tools", "system", "instructions", "systemInstruction")]
    return head + [orjson.dumps(unit) for unit in history_units(provider, payload)[:units]]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(grown=grown_histories(), ctx=contexts(), system=st.sampled_from([None, "Be brief."]))
def test_appending_turns_keeps_every_targets_stable_prefix_byte_for_byte(
    grown: tuple[list[PersistedMessage], list[int]], ctx: ProjectionContext, system: str | None
) -> None:
    messages, cuts = grown
    for provider in SUPPORTED_PROVIDERS:
        previous: ChatRequest | None = None
        for cut in cuts:
            built = _built(provider, messages[:cut], ctx, system)
            if built is None:
                continue
            assert built.prefix is not None
            if previous is not None and previous.prefix is not None:
                measured = previous.prefix
                if not unchanged_prefix(provider, built.payload, measured):
                    before = _head_and_units(provider, previous.payload, measured.units)
                    after = _head_and_units(provider, built.payload, measured.units)
                    first = next(n for n, (x, y) in enumerate(zip(before, after, strict=False)) if x != y)
                    raise AssertionError((provider, cut, first, before[first], after[first]))
            previous = built


def test_the_stable_prefix_ends_before_the_last_assistant_turn_until_it_is_answered() -> None:
    history = b.history(
        b.user("fix it"),
        b.tool_call("c1", "Read"),
        b.tool_result("c1", "ok"),
        b.assistant("done"),
    )
    built = _built("anthropic", history, ProjectionContext(), None)
    assert built is not None and built.prefix is not None
    # user, assistant(call), user(result), assistant(done), user(Continue): settled through the result.
    assert stable_units("anthropic", built.payload) == built.prefix.units == 3
    answered = _built("anthropic", b.history(*history, b.user("thanks")), ProjectionContext(), None)
    assert answered is not None and answered.prefix is not None
    # The answer is followed by a real prompt: all but the last turn (a later message may merge into it).
    assert answered.prefix.units == 4 == len(answered.payload["messages"]) - 1
    called = _built("anthropic", b.history(*history[:2]), ProjectionContext(), None)
    assert called is not None and called.prefix is not None and called.prefix.units == 1


def test_a_reminder_in_a_tool_loop_never_rewrites_the_prompt_before_it() -> None:
    first = b.history(b.user("fix it"), b.tool_call("c1", "Read"), b.tool_result("c1", "ok"))
    grown = b.history(*first, b.reminder("<system-reminder>keep going</system-reminder>"))
    before, after = (
        _payload("openai", h, ProjectionContext(inject_runtime_reminder=True), None) for h in (first, grown)
    )
    assert before is not None and after is not None
    assert after["messages"][0] == before["messages"][0]
    assert after["messages"][-1]["role"] == "user"


def test_cache_marks_are_not_part_of_the_prefix() -> None:
    history = b.history(b.user("x" * 6000), b.assistant("ok"), b.user("y"))
    view = project(View.MODEL, [promote(m) for m in history], ProjectionContext())
    plain = build_chat_request(view, provider="anthropic", model="claude-sonnet-4-5", system="S" * 5000)
    marked = build_chat_request(
        view, provider="anthropic", model="claude-sonnet-4-5", system="S" * 5000, cache=CacheTarget(AUTO)
    )
    assert marked.breakpoints and marked.prefix is not None and marked.prefix.written is not None
    assert plain.prefix == replace(marked.prefix, written=None)
