"""The next turn's ``/chat`` spliced from what the last one kept is the fresh build, byte for byte.

Random histories (interrupted calls, orphans, reused ids, reminders, media, foreign reasoning, compactions)
grow by random turns one batch at a time, as an agent appends them; after every batch each target is built
twice: whole, and spliced from what the previous batch's build kept. Payload, diagnostics,
model view, prefix and breakpoints must agree, with and without tool definitions (without them, a history
holding tool calls gets a placeholder tool, which the tail must build alike).
"""

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote
from app.projections.projector import project
from app.projections.types import Projection, ProjectionContext, View
from app.providers.caching import AUTO, CacheTarget, PromptPrefix
from app.providers.chat_request import ChatRequest, Draft, draft_chat_request
from app.providers.errors import EmptyConversation
from app.providers.registry import SUPPORTED_PROVIDERS
from app.services.turn_splice import MAX_CARRIED, BuildTail, KeptTurn, TurnBuild, build_turn, count_turn
from tests import builders as b
from tests.providers.test_payload_properties import MODELS, TOOLS
from tests.strategies import RUN_MODELS, contexts, grown_histories

MARK_ALL = CacheTarget(AUTO, min_tokens=0)
"""Every breakpoint a target takes, so that marks land in spliced units too."""


def turn_builders(provider: str, ctx: ProjectionContext, system: str | None, tools: Any) -> tuple[BuildTail, BuildTail]:
    def build(messages: Sequence[EngineMessage], continues: bool) -> tuple[Projection, Draft]:
        view = project(View.MODEL, messages, ctx)
        draft = draft_chat_request(
            view, provider=provider, model=MODELS[provider], system=system, tools=tools, continues=continues
        )
        return view, draft

    return (lambda messages: build(messages, False)), (lambda messages: build(messages, True))


def build_turn_or_none(
    messages: list[EngineMessage],
    builders: tuple[BuildTail, BuildTail],
    previous: PromptPrefix | None,
    kept: KeptTurn | None,
    keep: bool,
) -> TurnBuild | None:
    try:
        return build_turn(messages, *builders, cache=MARK_ALL, previous=previous, kept=kept, keep=keep)
    except EmptyConversation:
        return None


def tool_loop(turns: int, call_id: str | None = None) -> list[EngineMessage]:
    """An agent's tool loop: the user's ask, then a call and its result a turn; every turn's call under
    ``call_id`` when given (as runtimes that number their calls within a response do)."""
    messages: list[PersistedMessage] = [b.user("fix the build")]
    for n in range(1, turns + 1):
        messages += [
            b.tool_call(call_id or f"c{n}", "bash", command=f"make {n}"),
            b.tool_result(call_id or f"c{n}", f"out {n}", tool_name="bash"),
        ]
    return [promote(message) for message in b.history(*messages)]


def turn_answer(turn: TurnBuild) -> tuple[Any, ...]:
    built: ChatRequest = turn.request
    return (
        orjson.dumps(built.payload),
        built.diagnostics,
        turn.view,
        built.prefix,
        built.breakpoints,
        built.unchanged,
    )


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    grown=grown_histories(),
    ctx=contexts(),
    system=st.sampled_from([None, "Be brief."]),
    tools=st.sampled_from([None, TOOLS]),
)
def test_a_spliced_turn_is_the_whole_build_after_every_append(
    grown: tuple[list[PersistedMessage], list[int]], ctx: ProjectionContext, system: str | None, tools: Any
) -> None:
    persisted, cuts = grown
    engine = [promote(message) for message in persisted]
    for provider in SUPPORTED_PROVIDERS:
        target = replace(ctx, provider=provider, model=MODELS[provider], run_models=RUN_MODELS)
        builders = turn_builders(provider, target, system, tools)
        kept: KeptTurn | None = None
        previous: PromptPrefix | None = None
        for cut in cuts:
            window = engine[:cut]
            spliced = build_turn_or_none(window, builders, previous, kept, keep=True)
            whole = build_turn_or_none(window, builders, previous, None, keep=False)
            if whole is None:
                assert spliced is None
                continue
            assert spliced is not None
            assert turn_answer(spliced) == turn_answer(whole), (provider, cut, spliced.spliced)
            counted, kept = count_turn(window, spliced.view, target, spliced.joined, spliced.next_turn)
            assert counted == count_turn(window, whole.view, target, None, None)[0], (provider, cut)
            previous = whole.request.prefix


def test_a_kept_turn_carries_where_the_last_cuts_resume_latest_first() -> None:
    """Turn after turn of an agent's tool loop, the kept turn carries the prefix measure's state and the
    count's tally at its own cut and the cuts before it, at most ``MAX_CARRIED``, so a later turn whose cut
    lies before the last one's starts from the nearest cut before it instead of the head."""
    engine = tool_loop(29)
    ctx = ProjectionContext(provider="anthropic", model=MODELS["anthropic"])
    builders = turn_builders("anthropic", ctx, "Be brief.", TOOLS)
    kept: KeptTurn | None = None
    for end in range(3, len(engine) + 1, 2):
        turn = build_turn(engine[:end], *builders, cache=MARK_ALL, previous=None, kept=kept, keep=True)
        _, kept = count_turn(engine[:end], turn.view, ctx, turn.joined, turn.next_turn)
    assert kept is not None
    cuts = [counted.cut for counted in kept.counted]
    assert MAX_CARRIED == 8 and cuts == [43, 45, 47, 49, 51, 53, 55, 57]  # the last eight turns' cuts
    units = [resume.units for resume in kept.resumes()]
    assert len(units) == MAX_CARRIED and units == sorted(set(units), reverse=True)


@pytest.mark.parametrize("provider", SUPPORTED_PROVIDERS)
def test_long_tool_loops_are_spliced(provider: str) -> None:
    """An agent's tool loop, a call and its result a turn, under a system prompt: every build after the first
    two is spliced, for every target (a system prompt that is a message of the history, as OpenAI's, opens
    the whole build and not the tail's)."""
    engine = tool_loop(29)
    ctx = ProjectionContext(provider=provider, model=MODELS[provider])
    builders = turn_builders(provider, ctx, "Be brief.", TOOLS)
    kept = None
    spliced = []
    for end in range(3, len(engine) + 1, 2):
        turn = build_turn_or_none(engine[:end], builders, None, kept, keep=True)
        assert turn is not None
        spliced.append(turn.spliced)
        kept = turn.next_turn
    assert all(spliced[2:])


def counting(build_tail: BuildTail, lengths: list[int]) -> BuildTail:
    """``build_tail``, noting the length of every tail it is asked to build in ``lengths``."""

    def counted(messages: Sequence[EngineMessage]) -> tuple[Projection, Draft]:
        lengths.append(len(messages))
        return build_tail(messages)

    return counted


def test_a_loop_that_reuses_its_call_ids_builds_no_tail_trying_to_keep_a_turn() -> None:
    """Every turn's call is ``call_0``: the whole build renames the later ones, which no tail built alone can,
    so no cut would keep a turn; each is passed over before its tail is built (it cost up to ten builds of
    ever longer tails, on every request of such a session). The answer is the whole build all the same."""
    engine = tool_loop(40, call_id="call_0")
    ctx = ProjectionContext(provider="anthropic", model=MODELS["anthropic"])
    build_whole, build_tail = turn_builders("anthropic", ctx, "Be brief.", TOOLS)
    tails: list[int] = []
    counted_tail = counting(build_tail, tails)
    turn = build_turn(engine, build_whole, counted_tail, cache=MARK_ALL, previous=None, kept=None, keep=True)
    whole = build_turn(engine, build_whole, build_tail, cache=MARK_ALL, previous=None, kept=None, keep=False)
    assert turn.next_turn is None and tails == []
    assert turn_answer(turn) == turn_answer(whole)
    assert any(repair.rule == "duplicate-tool-call-id" for repair in turn.request.diagnostics.repairs)


def test_a_reused_id_passes_over_only_the_cuts_it_crosses() -> None:
    """A late turn reuses the third turn's call id: of the cuts tried (the turn starts 1, 2, 4 and 8 turns from
    the end), the three after that turn's call are passed over unbuilt, and the fourth, whose tail holds every
    mention of it, is built and kept."""
    engine = tool_loop(8)
    again = [b.tool_call("c3", "bash", command="make again"), b.tool_result("c3", "again", tool_name="bash")]
    window = [*engine, *(promote(message) for message in b.history(*again, start_seq=len(engine) + 1))]
    ctx = ProjectionContext(provider="anthropic", model=MODELS["anthropic"])
    build_whole, build_tail = turn_builders("anthropic", ctx, "Be brief.", TOOLS)
    tails: list[int] = []
    counted_tail = counting(build_tail, tails)
    turn = build_turn(window, build_whole, counted_tail, cache=MARK_ALL, previous=None, kept=None, keep=True)
    assert turn.next_turn is not None and turn.next_turn.cut == 3 and tails == [len(window) - 3]


@pytest.mark.parametrize("provider", SUPPORTED_PROVIDERS)
def test_answers_without_a_tool_call_keep_the_cut_where_the_last_turn_kept_it(provider: str) -> None:
    """A tool loop, then chat turns whose answers call no tool, with no tool definitions given: Anthropic's
    whole build gets a placeholder tool (its history holds calls) and a tail of those answers alone does not,
    so the newest cuts cannot be kept, and the doubling steps jumped to a cut before the one kept a turn
    earlier on some turns, where the next build measured and counted its whole window from the head. The
    kept turn's own cut is tried before any earlier one: the cut never moves back, every turn is spliced, and
    each answer is the whole build, for every target."""
    loop = tool_loop(6)
    chat: list[PersistedMessage] = []
    for n in range(1, 7):
        chat += [b.user(f"and step {n}?"), b.assistant(f"step {n} done")]
    engine = [*loop, *(promote(message) for message in b.history(*chat, start_seq=len(loop) + 1))]
    ctx = ProjectionContext(provider=provider, model=MODELS[provider])
    builders = turn_builders(provider, ctx, "Be brief.", None)
    kept: KeptTurn | None = None
    cuts: list[int] = []
    for end in range(len(loop) + 2, len(engine) + 1, 2):
        turn = build_turn_or_none(engine[:end], builders, None, kept, keep=True)
        whole = build_turn_or_none(engine[:end], builders, None, None, keep=False)
        assert turn is not None and whole is not None
        assert turn_answer(turn) == turn_answer(whole)
        assert kept is None or turn.spliced
        kept = turn.next_turn
        assert kept is not None
        cuts.append(kept.cut)
    assert cuts == sorted(cuts), cuts
