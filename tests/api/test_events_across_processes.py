"""Two ``projector serve`` processes over one database, each with its own LISTEN connection: what is appended
through one streams from the other, every seq exactly once even when the client reconnects in the middle of a
burst; a session deleted through one is dropped from the windows the other kept for /chat; and a server told
to stop (SIGTERM) ends its open streams instead of waiting on them."""

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from tests.api.sse import open_stream, serve_process
from tests.api.wire import append, assistant, new_session, user
from tests.trust.live_server import forget_everything

BURST = 300
NOTICE_WITHIN_SECONDS = 30


@asynccontextmanager
async def two_processes(
    database_url: str, tmp_path: Path, first: str, second: str
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Two ``projector serve`` processes over the test database, a client for each; the data goes after."""
    with (
        serve_process(database_url, tmp_path / f"{first}.log") as (first_url, _),
        serve_process(database_url, tmp_path / f"{second}.log") as (second_url, _),
    ):
        try:
            async with (
                httpx.AsyncClient(base_url=first_url, timeout=30) as first_client,
                httpx.AsyncClient(base_url=second_url, timeout=30) as second_client,
            ):
                yield first_client, second_client
        finally:
            forget_everything(database_url)


async def test_appends_through_one_process_stream_from_the_other_once_each_across_a_reconnect(
    database_url: str, tmp_path: Path
) -> None:
    async with two_processes(database_url, tmp_path, "writer", "reader") as (writer, reader):
        await new_session(writer, "burst")

        async def burst() -> None:
            for n in range(1, BURST + 1):
                assert (await append(writer, "burst", user(f"message {n}", id=f"m{n}"))).status_code == 201

        received: list[int] = []
        async with open_stream(reader, "burst", after=0) as stream:
            appending = asyncio.create_task(burst())
            received += [int(event.id or 0) for event in await stream.messages(BURST // 3, within=30)]
        # Dropped mid-burst; the writer goes on meanwhile.
        await asyncio.sleep(0.2)
        async with open_stream(reader, "burst", last_event_id=received[-1]) as stream:
            received += [int(event.id or 0) for event in await stream.messages(BURST - len(received), within=30)]
            await appending
            await append(writer, "burst", user("after the burst", id="last"))
            received += [int(event.id or 0) for event in await stream.messages(1, within=30)]
    assert received == list(range(1, BURST + 2))


async def kept_window_bytes(client: httpx.AsyncClient) -> float:
    """What the process's kept /chat windows hold, as its metrics say."""
    metrics = (await client.get("/metrics")).text
    return next(
        float(line.split()[1]) for line in metrics.splitlines() if line.startswith("projector_window_reuse_bytes ")
    )


async def test_a_session_deleted_through_one_process_leaves_the_others_kept_windows(
    database_url: str, tmp_path: Path
) -> None:
    async with two_processes(database_url, tmp_path, "deleter", "chatter") as (deleter, chatter):
        await new_session(deleter, "doomed")
        await append(deleter, "doomed", user("x" * 20_000), assistant("done"), user("next"))
        ask = {"sessionId": "doomed", "provider": "openai", "model": "gpt-5"}
        assert (await chatter.post("/chat", json=ask)).status_code == 200
        kept = await kept_window_bytes(chatter)
        assert (await deleter.delete("/sessions/doomed")).status_code == 204
        # The other process learns of the deletion from its notice, a moment after the answer.
        for _ in range(NOTICE_WITHIN_SECONDS * 20):
            if not (left := await kept_window_bytes(chatter)):
                break
            await asyncio.sleep(0.05)
    assert kept > 0
    assert left == 0


async def test_sigterm_ends_open_streams_and_the_server_exits_well_within_its_grace(
    database_url: str, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    with serve_process(database_url, log) as (url, process):
        try:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                await new_session(client, "closing")
                async with open_stream(client, "closing") as first, open_stream(client, "closing") as second:
                    stopped_at = time.monotonic()
                    process.send_signal(signal.SIGTERM)
                    assert await first.ended(within=10)
                    assert await second.ended(within=10)
            exit_code = await asyncio.to_thread(process.wait, 20)
            took = time.monotonic() - stopped_at
        finally:
            forget_everything(database_url)
    assert exit_code in (0, -signal.SIGTERM)
    assert took < 10, f"shutdown took {took:.1f} s with streams open"
    assert "Application shutdown complete" in log.read_text()
