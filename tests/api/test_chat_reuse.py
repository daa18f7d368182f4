"""``/chat`` and the context report reuse the window they read a moment ago: the answer is byte for byte the
fresh build's after any sequence of appends, amendments, prunes, compactions and new runs, for every target.
A pure append, or a run no message names yet, is served from the kept window plus the appended messages (and
the pipeline runs on the last turn only, spliced after what the previous build kept); an amendment, a prune or
a run named before it existed re-reads just the messages it rewrote; a compaction reads the window again."""

import asyncio
import itertools
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from fastapi import FastAPI
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.api.auth import DEFAULT_TENANT
from app.api.bodies import chat_diagnostics_body
from app.observability import TURN_SPLICES
from app.projections.types import ProjectionContext
from app.providers.registry import SUPPORTED_PROVIDERS
from app.services.chat import ChatAsk, build_chat
from app.services.context_report import report_context
from app.services.heavy_work import OFF_LOOP_WEIGHT, content_weight, run_within
from app.services.snapshots import load_snapshot
from app.services.window_reuse import ReadOutcome, WindowReuse
from tests.api.wire import append, assistant, new_session, tool_call, tool_result, user
from tests.database import plain_dsn
from tests.providers.test_payload_properties import MODELS, TOOLS

pytestmark = pytest.mark.db

SYSTEM = "You are a careful engineer."
SESSIONS = itertools.count()
PLACED: set[str] = set()
"""The cache breakpoints the reused builds placed: a mark in the history is a copy of a block the kept
window holds, which must never be edited in place."""

turns = st.lists(
    st.sampled_from(["user", "call", "answered", "answer", "reasoning", "early", "unanswered"]), min_size=1, max_size=4
)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("append"), turns),
        st.tuples(st.sampled_from(["amend", "amend-new", "prune", "compact", "run", "named-run", "noop"]), st.just([])),
    ),
    min_size=1,
    max_size=6,
)


class Session:
    """One session written through the API, with the ids written so far."""

    def __init__(self, client: httpx.AsyncClient, session_id: str) -> None:
        self.client = client
        self.id = session_id
        self.count = 0
        self.results: list[str] = []
        self.runs: list[str] = []
        self.upcoming = self.fresh("run")
        """A run that messages of kind ``early`` name before it exists (``named-run`` creates it)."""
        self.upcoming_named = False

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def messages(self, kinds: list[str]) -> list[dict[str, Any]]:
        batch: list[dict[str, Any]] = []
        run = {"runId": self.runs[-1]} if self.runs else {}
        early = {"runId": self.upcoming}
        for kind in kinds:
            call = self.fresh("c")
            if kind == "user":
                batch.append(user(f"step {call}", id=self.fresh("u")))
            elif kind in ("call", "answered", "unanswered"):
                batch.append(tool_call(call, "bash", id=self.fresh("a"), command="make"))
                if kind != "unanswered":
                    result = self.fresh("t")
                    self.results.append(result)
                    batch.append(tool_result(call, "bash", f"out {call} " + "x" * 300, id=result))
            elif kind == "answer":
                message = assistant(f"done {call}", id=self.fresh("d"), provider="anthropic", model=MODELS["anthropic"])
                batch.append({**message, **run})
            elif kind == "early":
                # No model of its own: the run it names decides whose reasoning it holds, once that run exists.
                parts = [{"type": "reasoning", "text": f"early {call}"}, {"type": "text", "text": "then"}]
                batch.append({**assistant(parts, id=self.fresh("e")), **early})
                self.upcoming_named = True
            else:
                parts = [{"type": "reasoning", "text": f"think {call}"}, {"type": "text", "text": "so"}]
                message = assistant(parts, id=self.fresh("r"), provider="openai", model=MODELS["openai"])
                batch.append({**message, **run})
        return batch

    async def step(self, action: str, kinds: list[str]) -> ReadOutcome:
        """Writes one change; returns how the next read of a window kept before it goes: ``hit`` when it
        changed no view of what was there (an append, a run no message names), ``refresh`` when it rewrote
        messages (an amendment, a prune that marked some, a run named before it existed), ``miss`` when it
        moved the live history's start (a compaction)."""
        client, path = self.client, f"/sessions/{self.id}"
        if action == "append":
            response = await append(client, self.id, *self.messages(kinds))
            assert response.status_code == 201, response.text
            return "hit"
        if action in ("amend", "amend-new") and self.results:
            # The oldest result pruned by hand, or a note on the newest one (a runtime's usage after a step).
            amended, changes = (
                (self.results[0], {"compactedAt": "2026-11-29T10:00:00Z"})
                if action == "amend"
                else (self.results[-1], {"note": self.fresh("note")})
            )
            response = await client.patch(f"{path}/messages/{amended}", json={"metadata": changes})
            assert response.status_code == 200, response.text
            return "refresh"
        if action == "prune":
            body = {"protectUserTurns": 0, "protectToolTokens": 0, "minimumSavingsTokens": 0}
            response = await client.post(f"{path}/prune", json=body)
            assert response.status_code == 200, response.text
            return "refresh" if response.json()["markedMessageIds"] else "hit"
        if action == "compact":
            response = await client.post(f"{path}/compactions", json={"summary": "What came before."})
            assert response.status_code in (201, 409, 422), response.text
            return "miss" if response.status_code == 201 else "hit"
        if action == "run":
            await self.create_run(self.fresh("run"))
        elif action == "named-run":
            named, self.upcoming_named = self.upcoming_named, False
            await self.create_run(self.upcoming)
            self.upcoming = self.fresh("run")
            return "refresh" if named else "hit"
        return "hit"

    async def create_run(self, run_id: str) -> None:
        body = {"id": run_id, "model": f"openai/{MODELS['openai']}"}
        response = await self.client.post(f"/sessions/{self.id}/runs", json=body)
        assert response.status_code == 201, response.text
        self.runs.append(run_id)


async def chat_bytes(
    app: FastAPI, session_id: str, provider: str, reuse: WindowReuse | None, *, compacted: bool = True
) -> bytes:
    """What ``POST /chat`` answers (payload, diagnostics, context report), encoded; ``compacted``: whether the
    model view starts at the compaction (else the whole session is read). A build without ``reuse`` is the
    fresh build."""
    ctx = ProjectionContext(apply_compact_boundary=compacted)
    ask = ChatAsk(session_id, provider, ctx, model=MODELS[provider], system=SYSTEM, tools=TOOLS)
    state = app.state
    # Every cache breakpoint placed whatever the prompt's length: the marks go into the history's blocks.
    marking = state.settings.model_copy(update={"cache_min_tokens": 0})
    answer = await build_chat(
        state.database, state.model_windows, marking, DEFAULT_TENANT, ask, remember=True, reuse=reuse
    )
    built = answer.request
    body = {
        "payload": built.payload,
        "diagnostics": chat_diagnostics_body(built.diagnostics, answer.prefix_break),
        "context": answer.context.as_dict(),
    }
    return orjson.dumps(body)


async def context_bytes(app: FastAPI, session_id: str, reuse: WindowReuse | None) -> bytes:
    state = app.state
    ctx = ProjectionContext(provider="anthropic", model=MODELS["anthropic"])
    report = await report_context(
        state.database,
        state.model_windows,
        state.settings,
        DEFAULT_TENANT,
        session_id,
        ctx,
        max_output_tokens=None,
        reuse=reuse,
    )
    return orjson.dumps(report.as_dict())


def reads(reuse: WindowReuse) -> tuple[int, int, int]:
    """How many reads of a window hit, refreshed and missed so far."""
    return reuse.hits, reuse.refreshes, reuse.misses


async def reused_as_fresh(app: FastAPI, session_id: str, reuse: WindowReuse) -> bytes:
    """The anthropic answer built on the kept window, checked against the fresh builds around it (see
    ``same_as_fresh``)."""
    await chat_bytes(app, session_id, "anthropic", None)
    reused = await chat_bytes(app, session_id, "anthropic", reuse)
    assert reused == await chat_bytes(app, session_id, "anthropic", None)
    return reused


async def same_as_fresh(app: FastAPI, session_id: str, reuse: WindowReuse, *, compacted: bool) -> None:
    """For every target, the answer built on the kept window is the fresh build's. A build remembers its
    prefix for the next one to compare with, so the reused build is compared with a fresh build made right
    after it (which then sees the prefix the reused one left, as the reused one saw the first fresh one's)."""
    for provider in SUPPORTED_PROVIDERS:
        await chat_bytes(app, session_id, provider, None, compacted=compacted)
        reused = await chat_bytes(app, session_id, provider, reuse, compacted=compacted)
        assert reused == await chat_bytes(app, session_id, provider, None, compacted=compacted), provider
        PLACED.update(orjson.loads(reused)["context"]["cache"]["nextRequest"]["breakpoints"])
    assert await context_bytes(app, session_id, reuse) == await context_bytes(app, session_id, None)


@settings(max_examples=12)
@given(first=turns, changes=steps, compacted=st.booleans())
# Run first (explicit examples come before any replayed from the example database): a second user turn makes
# the first one stable, so a history mark is placed before an example whose builds place none can run.
@example(first=["user"], changes=[("append", ["user"])], compacted=False)
async def test_reused_answers_are_the_fresh_answers_after_any_history_for_every_target(
    app: FastAPI, first: list[str], changes: list[tuple[str, list[str]]], compacted: bool
) -> None:
    reuse = WindowReuse(64 * 1024 * 1024)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        session = Session(client, await new_session(client, f"reuse{next(SESSIONS)}"))
        await session.step("append", first)
        await same_as_fresh(app, session.id, reuse, compacted=compacted)
        for action, kinds in changes:
            before = reads(reuse)
            outcome = await session.step(action, kinds)
            await same_as_fresh(app, session.id, reuse, compacted=compacted)
            # The first reused read of each window after the change goes as the change says, the others extend
            # its window: the context report reads the compacted window, /chat's is another when not compacted.
            windows = 1 if compacted else 2
            changed = {"hit": (0, 0, 0), "refresh": (0, windows, 0), "miss": (0, 0, windows)}[outcome]
            hits = len(SUPPORTED_PROVIDERS) + 1 - sum(changed)
            assert tuple(now - then for now, then in zip(reads(reuse), before, strict=True)) == (
                hits,
                changed[1],
                changed[2],
            )
    assert "history" in PLACED


@pytest.mark.parametrize("noted", [False, True], ids=["appends only", "a note on the newest message"])
async def test_an_agents_tool_loop_is_spliced_turn_after_turn(
    client: httpx.AsyncClient, app: FastAPI, noted: bool
) -> None:
    """Each turn appends a call and its result: the build runs on the last turn only, and answers as fresh.
    A note written on the turn's newest message after it was built (a step's usage, its timing) rewrites a
    message after the kept turn's cut: the turn is kept, and checks for the new message."""
    reuse = WindowReuse(64 * 1024 * 1024)
    session = Session(client, await new_session(client))
    await session.step("append", ["user", "answered"])
    spliced = TURN_SPLICES.labels("spliced")._value.get()
    for _ in range(4):
        await session.step("append", ["answered"])
        if noted:
            await chat_bytes(app, session.id, "anthropic", reuse)
            await session.step("amend-new", [])
        await reused_as_fresh(app, session.id, reuse)
    assert TURN_SPLICES.labels("spliced")._value.get() == spliced + (7 if noted else 3)
    assert reuse.refreshes == (4 if noted else 0)


async def test_an_amendment_re_reads_only_the_message_it_rewrote(client: httpx.AsyncClient, app: FastAPI) -> None:
    reuse = WindowReuse(64 * 1024 * 1024)
    session = Session(client, await new_session(client))
    await session.step("append", ["answered", "answer"])
    await chat_bytes(app, session.id, "anthropic", reuse)
    await session.step("amend", [])
    before = reads(reuse)
    reused = await reused_as_fresh(app, session.id, reuse)
    assert reads(reuse) == (before[0], before[1] + 1, before[2])
    assert b"Old tool result content cleared" in reused


async def test_an_amendment_before_the_kept_turns_cut_builds_the_whole_window(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    """The kept turn holds what was built from the messages before its cut, so it cannot serve once one of
    them is rewritten; the window is still refreshed, not read again."""
    reuse = WindowReuse(64 * 1024 * 1024)
    session = Session(client, await new_session(client))
    await session.step("append", ["user", "answered", "answered"])
    await chat_bytes(app, session.id, "anthropic", reuse)
    await session.step("append", ["answered"])
    await session.step("amend", [])
    spliced = TURN_SPLICES.labels("spliced")._value.get()
    reused = await reused_as_fresh(app, session.id, reuse)
    assert TURN_SPLICES.labels("spliced")._value.get() == spliced
    assert reuse.refreshes == 1
    assert b"Old tool result content cleared" in reused


async def test_a_build_that_read_the_window_before_an_amendment_keeps_no_turn_after_it(
    client: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Builds of one process overlap: one still building on the window it read when an amendment lands (from
    any process) and a later build refreshes the kept window, dropping the kept turns the amendment made
    stale. The slow build's turn, kept after that, was built from the message as it was: the next build must
    not splice after it."""
    reuse = WindowReuse(64 * 1024 * 1024)
    session = Session(client, await new_session(client))
    await session.step("append", ["user", "answered", "answered", "answer"])
    await chat_bytes(app, session.id, "anthropic", reuse)
    await session.step("append", ["user", "answered"])
    read, resume = asyncio.Event(), asyncio.Event()

    async def held(*args: Any, **kwargs: Any) -> Any:
        read.set()
        await resume.wait()
        return await run_within(*args, **kwargs)

    monkeypatch.setattr("app.services.chat.run_within", held)
    slow = asyncio.create_task(chat_bytes(app, session.id, "anthropic", reuse))
    await read.wait()
    monkeypatch.setattr("app.services.chat.run_within", run_within)
    await session.step("amend", [])
    await chat_bytes(app, session.id, "anthropic", reuse)
    resume.set()
    await slow
    reused = await reused_as_fresh(app, session.id, reuse)
    assert b"Old tool result content cleared" in reused


async def test_a_change_that_stamps_no_message_reads_the_window_again(
    client: httpx.AsyncClient, app: FastAPI, direct_database_url: str
) -> None:
    """A refresh trusts the stamps only when they name every change the session row counts: a change that
    rewrote a view without stamping what it rewrote must not leave a stale window in use."""
    reuse = WindowReuse(64 * 1024 * 1024)
    session = Session(client, await new_session(client))
    await session.step("append", ["user", "answered"])
    await chat_bytes(app, session.id, "anthropic", reuse)
    writer = await asyncpg.connect(plain_dsn(direct_database_url))
    try:
        await writer.execute(
            """UPDATE messages SET metadata = metadata || '{"compactedAt": "2026-12-06T00:00:00Z"}'
            WHERE session_id = $1 AND id = $2""",
            session.id,
            session.results[0],
        )
        await writer.execute("UPDATE sessions SET revision = revision + 1 WHERE id = $1", session.id)
    finally:
        await writer.close()
    misses = reuse.misses
    reused = await chat_bytes(app, session.id, "anthropic", reuse)
    assert reuse.misses == misses + 1
    assert b"Old tool result content cleared" in reused


async def test_a_run_a_turn_keeps_the_window_and_a_run_named_before_it_existed_reads_it_again(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    """A runtime that creates a run each turn is still served from its kept window; a run that messages
    named before it existed decides whose reasoning they hold, so its creation re-reads those messages."""
    reuse = WindowReuse(64 * 1024 * 1024)
    session = Session(client, await new_session(client))
    await session.step("append", ["user", "early", "answered"])
    await chat_bytes(app, session.id, "openai-responses", reuse)
    hits = reuse.hits
    assert await session.step("run", []) == "hit"
    await chat_bytes(app, session.id, "openai-responses", reuse)
    assert reuse.hits == hits + 1
    before = await chat_bytes(app, session.id, "openai-responses", None)
    assert await session.step("named-run", []) == "refresh"
    refreshes = reuse.refreshes
    reused = await chat_bytes(app, session.id, "openai-responses", reuse)
    assert reuse.refreshes == refreshes + 1
    assert reused == await chat_bytes(app, session.id, "openai-responses", None)
    unknown = b"reasoning dropped: produced by an unknown model"
    assert unknown in before and unknown not in reused


async def test_a_session_created_again_under_its_id_is_not_served_the_old_window(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    reuse = WindowReuse(64 * 1024 * 1024)
    await new_session(client, "again")
    await append(client, "again", user("the first life"))
    await chat_bytes(app, "again", "openai", reuse)
    assert (await client.delete("/sessions/again")).status_code == 204
    await new_session(client, "again")
    await append(client, "again", user("the second life"), user("and more"))
    answer = await chat_bytes(app, "again", "openai", reuse)
    assert b"the first life" not in answer and b"the second life" in answer


async def test_kept_windows_stay_within_their_budget_and_zero_keeps_none(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    for name in ("one", "two", "three"):
        await new_session(client, name)
        await append(client, name, user("x" * 20_000))
    small = WindowReuse(50_000)
    none = WindowReuse(0)
    for name in ("one", "two", "three"):
        await chat_bytes(app, name, "openai", small)
        await chat_bytes(app, name, "openai", none)
    assert 0 < small.size <= 50_000 and none.size == 0
    await chat_bytes(app, "one", "openai", small)
    assert small.misses == 4 and small.hits == 0  # "one" was evicted, least recently used


async def test_metrics_report_the_kept_bytes_and_the_hits(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hello"))
    for _ in range(2):
        response = await client.post("/chat", json={"sessionId": "s1", "provider": "openai", "model": "gpt-5"})
        assert response.status_code == 200, response.text
    metrics = (await client.get("/metrics")).text
    assert 'projector_window_reuse_total{outcome="hit"}' in metrics
    assert "projector_window_reuse_bytes" in metrics


async def test_a_reused_window_weighs_what_the_whole_window_read_afresh_weighs(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    """The kept window carries its weight: a request on it weighs only the messages since, and still runs its
    build in a worker thread exactly when the whole window is heavy (neither part is, alone). Weighing stops
    once heavy, so a heavy weight is only known to be heavy."""
    reuse = WindowReuse(64 * 1024 * 1024)
    database = app.state.database
    await new_session(client, "heavy")

    async def weights(added: int) -> tuple[int, int]:
        for n in range(added):
            await append(client, "heavy", user(f"{n}" * 300_000))
        kept = await load_snapshot(database, DEFAULT_TENANT, "heavy", reuse=reuse)
        fresh = await load_snapshot(database, DEFAULT_TENANT, "heavy")
        assert fresh.weight == content_weight(message.content for message in fresh.messages)
        return kept.weight, fresh.weight

    assert await weights(5) == (1465, 1465)
    assert await weights(1) == (1758, 1758)
    assert reuse.hits == 1
    kept, fresh = await weights(2)
    assert reuse.hits == 2
    assert kept >= OFF_LOOP_WEIGHT and fresh >= OFF_LOOP_WEIGHT


async def test_deleting_a_session_drops_what_this_process_kept_for_it(client: httpx.AsyncClient, app: FastAPI) -> None:
    reuse: WindowReuse = app.state.window_reuse
    before = reuse.size
    await new_session(client, "doomed")
    await append(client, "doomed", user("x" * 20_000), assistant("done"), user("next"))
    for _ in range(2):
        response = await client.post("/chat", json={"sessionId": "doomed", "provider": "openai", "model": "gpt-5"})
        assert response.status_code == 200, response.text
    assert reuse.size > before
    assert (await client.delete("/sessions/doomed")).status_code == 204
    assert reuse.size == before
