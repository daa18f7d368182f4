"""A prune's plan and a compaction's selection, transcript and plan walk the whole live history: on a long one
they run in a worker thread, so the event loop goes on answering other requests; on a short one they stay on
the loop, where a thread hop would cost more than the work."""

import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest

from app.services import compaction, pruning
from tests.api.test_context import service
from tests.api.wire import append, assistant, new_session, tool_call, tool_result, user
from tests.context.fake_model_server import CHAT_PATH, FakeModelServer, Reply, chat_completion

LONG_TURNS = 200
"""Turns of a kilobyte call and an 8 KB result each: heavy enough to leave the loop."""


def noting_where(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bool]:
    """Wraps ``module.name`` to note, per call, whether it ran on the event loop's (the main) thread."""
    on_loop: list[bool] = []
    original: Callable[..., Any] = getattr(module, name)

    def noted(*args: Any, **kwargs: Any) -> Any:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, noted)
    return on_loop


async def seed(client: httpx.AsyncClient, session_id: str, turns: int) -> None:
    await new_session(client, session_id)
    for turn in range(turns):
        response = await append(
            client,
            session_id,
            user(f"step {turn}", id=f"u{turn}"),
            tool_call(f"c{turn}", "read", id=f"call{turn}", path="p" * 1024),
            tool_result(f"c{turn}", "read", "r" * 8192, id=f"result{turn}"),
            assistant(f"done {turn}", id=f"a{turn}"),
        )
        assert response.status_code == 201, response.text


@pytest.fixture
def summarizer() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        server.reply(CHAT_PATH, Reply(json=chat_completion("## Goal\nRead the files.")))
        yield server


@pytest.fixture
async def served(database_url: str, summarizer: FakeModelServer) -> AsyncIterator[httpx.AsyncClient]:
    async with service(database_url, summarizer_base_url=summarizer.base_url, summarizer_model="summarizer") as client:
        yield client


async def test_a_long_prune_is_planned_in_a_worker_thread_and_a_short_one_on_the_loop(
    served: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_loop = noting_where(monkeypatch, pruning, "plan_prune")
    await seed(served, "long", LONG_TURNS)
    await seed(served, "short", 2)
    everything = {"protectUserTurns": 0, "protectToolTokens": 0, "minimumSavingsTokens": 0}
    for session_id in ("long", "short"):
        pruned = await served.post(f"/sessions/{session_id}/prune", json=everything)
        assert pruned.status_code == 200, pruned.text
        assert pruned.json()["markedMessageIds"]
    assert on_loop == [False, True]


async def test_a_long_compaction_selects_summarises_and_plans_in_a_worker_thread_and_a_short_one_on_the_loop(
    served: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = ("select_compaction", "compact_transcript", "build_compaction")
    on_loop = {step: noting_where(monkeypatch, compaction, step) for step in steps}
    await seed(served, "long", LONG_TURNS)
    await seed(served, "short", 2)
    for session_id in ("long", "short"):
        compacted = await served.post(f"/sessions/{session_id}/compactions", json={"throughMessageId": "a0"})
        assert compacted.status_code == 201, compacted.text
    assert on_loop == {step: [False, True] for step in steps}
