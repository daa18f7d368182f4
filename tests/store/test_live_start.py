"""The live history's start kept on the session row is what a search of the whole session finds, after every
write that could move it: appends of boundaries and summaries in any order and completeness, amendments of
their links, compactions and prunes."""

import random
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.api.auth import DEFAULT_TENANT
from app.projections.live_history import live_history, live_history_start_seq, newest_complete_compaction
from app.store.live_start import LiveStart
from app.store.messages import MessageRepository
from tests.api.wire import append, boundary, new_session, runtime, tool_call, tool_result, user

SUMMARY_TEXTS = ("Summary of what came before.", "", "   ", "Another summary.")


class History:
    """Random writes to one session through the API, with the ids written so far."""

    def __init__(self, client: httpx.AsyncClient, rng: random.Random) -> None:
        self.client = client
        self.rng = rng
        self.ids: list[str] = []
        self.boundaries: list[str] = []
        self.summaries: list[str] = []
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def boundary(self) -> dict[str, Any]:
        boundary_id = self.fresh("b")
        self.boundaries.append(boundary_id)
        through = self.rng.choice([None, "ghost", *self.ids[-6:]])
        return boundary(boundary_id, through=through)

    def summary(self, names: str | None = None) -> dict[str, Any]:
        summary_id = self.fresh("s")
        self.summaries.append(summary_id)
        target = names or self.rng.choice([*self.boundaries[-3:], "ghost", f"b{self.count + 1}"])
        return runtime("compact_summary", self.rng.choice(SUMMARY_TEXTS), summary_id, summaryForBoundaryId=target)

    def plain(self) -> list[dict[str, Any]]:
        call = self.fresh("c")
        if self.rng.random() < 0.5:
            return [user("next", id=self.fresh("m"))]
        return [tool_call(call, "read", id=self.fresh("m"), path="a"), tool_result(call, "read", "x" * 50, id=call)]

    async def step(self) -> None:
        action = self.rng.choice(["plain", "plain", "boundary", "summary", "pair", "amend", "compact", "prune"])
        batch: list[dict[str, Any]] = []
        if action == "plain":
            batch = self.plain()
        elif action == "boundary":
            batch = [self.boundary()]
        elif action == "summary":
            batch = [self.summary()]
        elif action == "pair":
            made = self.boundary()
            pair = [made, self.summary(names=made["id"])]
            batch = pair if self.rng.random() < 0.8 else pair[::-1]
        elif action == "amend" and (self.boundaries or self.summaries):
            await self.amend()
        elif action == "compact":
            response = await self.client.post("/sessions/h/compactions", json={"summary": "Compacted by the API."})
            assert response.status_code in (201, 409, 422), response.text
        elif action == "prune":
            response = await self.client.post("/sessions/h/prune", json={"protectUserTurns": 0})
            assert response.status_code == 200, response.text
        if batch:
            response = await append(self.client, "h", *batch)
            assert response.status_code == 201, response.text
            self.ids += [message["id"] for message in batch]

    async def amend(self) -> None:
        target = self.rng.choice([*self.boundaries, *self.summaries])
        if target.startswith("b"):
            changes = {"compactThroughMessageId": self.rng.choice([None, "ghost", *self.ids[-8:]])}
        else:
            changes = {"summaryForBoundaryId": self.rng.choice([None, "ghost", *self.boundaries[-3:]])}
        response = await self.client.patch(f"/sessions/h/messages/{target}", json={"metadata": changes})
        assert response.status_code in (200, 404), response.text


async def kept_and_searched(app: FastAPI) -> tuple[LiveStart | None, LiveStart | None, bool]:
    """What the session row keeps; what a search of the whole history finds; and whether the live history
    read from the row's start is the live history of the whole session."""
    async with app.state.database.reading() as connection:
        repository = MessageRepository(connection, DEFAULT_TENANT)
        kept = await repository.stored_live_start("h")
        found = await repository.find_live_start("h")
        whole = await repository.from_seq("h", 1)
        window = await repository.live_history("h")
    compaction = newest_complete_compaction(whole)
    searched = None
    if compaction is not None:
        start = live_history_start_seq(whole) or 1
        searched = LiveStart(compaction.boundary.seq, compaction.summary.seq, start)
    assert found == searched
    return kept, searched, live_history(window) == live_history(whole)


@pytest.mark.parametrize("seed", range(12))
async def test_the_session_row_holds_the_start_a_search_of_the_history_finds(
    app: FastAPI, client: httpx.AsyncClient, seed: int
) -> None:
    rng = random.Random(seed)
    history = History(client, rng)
    await new_session(client, "h")
    await append(client, "h", *(user(f"q{index}", id=f"q{index}") for index in range(4)))
    history.ids += [f"q{index}" for index in range(4)]
    for step in range(24):
        await history.step()
        kept, searched, same_window = await kept_and_searched(app)
        assert kept == searched, f"step {step}"
        assert same_window, f"step {step}"


async def test_a_compaction_through_the_api_moves_the_start_to_its_kept_tail(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await new_session(client, "h")
    await append(client, "h", *(user(f"q{index}", id=f"q{index}") for index in range(6)))
    response = await client.post("/sessions/h/compactions", json={"summary": "Earlier.", "throughMessageId": "q3"})
    assert response.status_code == 201, response.text
    kept, searched, same_window = await kept_and_searched(app)
    assert kept == searched == LiveStart(boundary_seq=7, summary_seq=8, start_seq=5)
    assert same_window
