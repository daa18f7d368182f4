"""The service tunes the cycle collector once, at start-up, so that building a long view does not wake it
every few hundred allocations."""

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from fastapi import FastAPI

from app.main import GC_THRESHOLDS
from tests.api.wire import append, new_session, tool_call, tool_result, user

CPYTHON_THRESHOLDS = (700, 10, 10)


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


async def test_a_long_model_view_wakes_the_collector_far_less_often_than_at_cpythons_thresholds(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
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

    async def view() -> None:
        response = await client.get("/sessions/s1/projection", params={"view": "model"})
        assert response.status_code == 200

    with thresholds(CPYTHON_THRESHOLDS), counted_collections() as at_defaults:
        await view()
    with counted_collections() as tuned:
        await view()
    assert len(tuned) * 5 <= len(at_defaults), (len(tuned), len(at_defaults))
