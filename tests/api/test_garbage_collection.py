"""The service tunes the cycle collector once, at start-up, so that building a long view does not wake it
every few hundred allocations."""

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from fastapi import FastAPI

from app.main import GC_THRESHOLDS
from app.services.window_reuse import WindowReuse
from tests.api.wire import append, new_session, tool_call, tool_result, user

CPYTHON_THRESHOLDS = (700, 10, 10)
MODEL = "claude-sonnet-4-5"


@contextmanager
def counted_collections() -> Iterator[list[int]]:
    """The generation of every collection that runs inside the block."""
    generations: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.callbacks.append(record)
    try:
        yield generations
    finally:
        gc.callbacks.remove(record)


@contextmanager
def thresholds(values: tuple[int, int, int]) -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(*values)
    try:
        yield
    finally:
        gc.set_threshold(*before)


async def test_start_up_freezes_what_exists_and_raises_the_thresholds(app: FastAPI) -> None:
    assert gc.get_threshold() == GC_THRESHOLDS
    assert gc.get_freeze_count() > 0


async def a_long_tool_loop(client: httpx.AsyncClient) -> None:
    """1,500 messages: a user step, a call and its result, 500 times."""
    await new_session(client)
    for turn in range(10):
        await append(
            client,
            "s1",
            *(
                message
                for index in range(50)
                for message in (
                    user(f"step {turn}.{index}"),
                    tool_call(f"c{turn}.{index}", "read"),
                    tool_result(f"c{turn}.{index}", "read", "output " * 20),
                )
            ),
        )


async def test_a_long_model_view_wakes_the_collector_far_less_often_than_at_cpythons_thresholds(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await a_long_tool_loop(client)

    async def view() -> None:
        response = await client.get("/sessions/s1/projection", params={"view": "model"})
        assert response.status_code == 200

    with thresholds(CPYTHON_THRESHOLDS), counted_collections() as at_defaults:
        await view()
    with counted_collections() as tuned:
        await view()
    assert len(tuned) * 5 <= len(at_defaults), (len(tuned), len(at_defaults))


async def test_a_cold_chat_of_a_long_session_frees_its_temporaries_before_any_collection(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """What a cold ``/chat`` allocates (the window it reads and keeps, the payload and the views between) stays
    under the young threshold, so no collection walks it; at 10,000 young objects several would."""
    await a_long_tool_loop(client)

    async def cold_chat_collections() -> list[int]:
        app.state.window_reuse = WindowReuse(app.state.settings.chat_reuse_bytes)
        gc.collect()  # the young generation as a collection leaves it: empty
        with counted_collections() as generations:
            response = await client.post("/chat", json={"sessionId": "s1", "provider": "anthropic", "model": MODEL})
        assert response.status_code == 200, response.text[:300]
        return generations

    tuned = await cold_chat_collections()
    with thresholds((10_000, 50, 100)):
        frequent = await cold_chat_collections()
    assert (tuned, len(frequent) >= 2) == ([], True), (tuned, frequent)
