"""Target 4: appends. A 500-message batch and 100 concurrent single appends, per-message cost; and writers to
one session never block readers or writers of another. Then what the database takes without HTTP: single
appends through the service layer (``services.messages.append_messages``, the route's own call) from 16
concurrent writers to 16 sessions for a few seconds, in this process: appends per second.

Isolation is measured two ways against one uvicorn worker: (a) session A's append lock is held open by
another connection (as a long append would) while session B is read and appended to: B must not wait for
it; (b) 16 clients hammer A with appends while B is read and appended to: B's latency is compared with an
idle server's (here B shares the worker's CPU with A's writers, so some slowdown is expected; waiting on A
would show as seconds).
"""

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import httpx

from app.api.auth import LOCAL_PRINCIPAL
from app.services.intake import MessageInput
from app.services.messages import append_messages
from app.settings import Settings
from app.store.database import Database
from bench.dataset import Text, turn_message
from bench.harness import (
    TENANT,
    arguments,
    client,
    database,
    median,
    ms,
    percentile,
    raw_connection,
    samples,
    serve,
    verdict,
)

TEXT = Text(11)


def message(position: int, message_id: str) -> dict[str, Any]:
    role, content, metadata = turn_message(position, TEXT, (2048, 8192))
    return {"id": message_id, "role": role, "content": content, "metadata": metadata}


async def new_session(http: httpx.AsyncClient, session_id: str) -> None:
    (await http.post("/sessions", json={"id": session_id})).raise_for_status()


async def append(http: httpx.AsyncClient, session_id: str, messages: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    response = await http.post(f"/sessions/{session_id}/messages", json={"messages": messages})
    elapsed = time.perf_counter() - started
    if response.status_code != 201:
        raise RuntimeError(f"append answered {response.status_code}: {response.text[:300]}")
    return elapsed


class SessionB:
    """What session B's users do: read the newest page, append one user message."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.count = 0

    async def read(self) -> None:
        response = await self.http.get("/sessions/B/messages", params={"limit": 50, "order": "desc"})
        response.raise_for_status()

    async def write(self) -> None:
        self.count += 1
        await append(self.http, "B", [{"role": "user", "content": f"B says {self.count}"}])


async def batch_figures(http: httpx.AsyncClient, batches: int) -> float:
    timings = []
    for index in range(batches):
        await new_session(http, f"batch{index}")
        batch = [message(position, f"b{index}-{position}") for position in range(500)]
        timings.append(await append(http, f"batch{index}", batch))
    took = median(timings)
    print(f"batch of 500 messages (2-8 KB tool results): {ms(took)}, {ms(took / 500)} a message")
    return took


async def concurrent_singles(http: httpx.AsyncClient, sessions: list[str]) -> None:
    """One single-message append per entry of ``sessions``, all at once."""
    started = time.perf_counter()
    latencies = await asyncio.gather(
        *(append(http, session_id, [message(index, f"c{index}")]) for index, session_id in enumerate(sessions))
    )
    wall = time.perf_counter() - started
    where = "one session" if len(set(sessions)) == 1 else f"{len(set(sessions))} sessions"
    print(
        f"{len(sessions)} concurrent single appends to {where}: {ms(wall)} in all, {ms(wall / len(sessions))}"
        f" a message; latency p50 {ms(percentile(latencies, 0.5))}, p99 {ms(percentile(latencies, 0.99))}"
    )


async def b_latencies(b: SessionB, repeat: int) -> tuple[list[float], list[float]]:
    return await samples(b.read, repeat=repeat, warmup=0), await samples(b.write, repeat=repeat, warmup=0)


async def service_rate(url: str, writers: int, seconds: float) -> float:
    """Single-message appends a second through the service layer, ``writers`` at once, each to its own
    session, for ``seconds``."""
    settings = Settings(database_url=None, migrate_on_start=False, pool_size=writers, pool_max_overflow=0)
    database = Database.open(url, settings)
    connection = await raw_connection(url)
    try:
        await connection.executemany(
            "INSERT INTO sessions (tenant_id, id) VALUES ($1, $2)", [(TENANT, f"rate{n}") for n in range(writers)]
        )
    finally:
        await connection.close()
    done = 0
    deadline = time.perf_counter() + seconds

    async def writer(number: int) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            message = MessageInput(role="user", content=f"writer {number} says {done}")
            await append_messages(database, LOCAL_PRINCIPAL, settings, f"rate{number}", [message], datetime.now(UTC))
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(writer(number) for number in range(writers)))
    rate = done / (time.perf_counter() - started)
    await database.dispose()
    print(f"{writers} writers, single appends through the service layer (no HTTP): {rate:.0f} appends/s")
    return rate


async def main(database_url: str | None, batches: int, singles: int) -> list[str]:
    lines = []
    async with database(database_url) as url, serve(url) as server, client(server, connections=120) as http:
        await batch_figures(http, batches)
        await new_session(http, "hot")
        await concurrent_singles(http, ["hot"] * singles)
        for index in range(singles):
            await new_session(http, f"spread{index}")
        await concurrent_singles(http, [f"spread{index}" for index in range(singles)])

        await new_session(http, "A")
        await new_session(http, "B")
        b = SessionB(http)
        await b_latencies(b, 5)
        idle_read, idle_write = await b_latencies(b, 30)
        print(f"B idle: read p50 {ms(median(idle_read))}, append p50 {ms(median(idle_write))}")

        # (a) A's append lock held by another transaction: an append to A waits, B must not.
        holder = await raw_connection(url)
        transaction = holder.transaction()
        await transaction.start()
        await holder.fetchval("SELECT last_seq FROM sessions WHERE tenant_id = $1 AND id = 'A' FOR UPDATE", TENANT)
        held_at = time.perf_counter()
        waiting_a = asyncio.create_task(append(http, "A", [message(0, "a-waits")]))
        locked_read, locked_write = await b_latencies(b, 20)
        held = time.perf_counter() - held_at
        a_done_early = waiting_a.done()
        await transaction.rollback()
        await holder.close()
        a_wait = await waiting_a
        print(
            f"A's lock held {held:.2f} s: B read max {ms(max(locked_read))}, B append max {ms(max(locked_write))};"
            f" A's own append {'finished early (not blocked?)' if a_done_early else f'waited {a_wait:.2f} s'}"
        )

        # (b) A hammered by 16 concurrent writers while B is used.
        stop = asyncio.Event()
        written = 0

        async def hammer(worker: int) -> None:
            nonlocal written
            position = 0
            while not stop.is_set():
                await append(http, "A", [message(position, f"h{worker}-{position}")])
                position += 1
                written += 1

        hammers = [asyncio.create_task(hammer(worker)) for worker in range(16)]
        hammered_at = time.perf_counter()
        await asyncio.sleep(0.5)
        busy_read, busy_write = await b_latencies(b, 30)
        stop.set()
        await asyncio.gather(*hammers)
        hammered = time.perf_counter() - hammered_at
        print(
            f"A hammered by 16 writers ({written} appends in {hammered:.1f} s, {written / hammered:.0f} a second):"
            f" B read p50 {ms(median(busy_read))} p99"
            f" {ms(percentile(busy_read, 0.99))}, B append p50 {ms(median(busy_write))} p99"
            f" {ms(percentile(busy_write, 0.99))}"
        )
        await service_rate(url, 16, 3.0)
    worst = max(max(locked_read), max(locked_write))
    lines.append(verdict("target 4 (B's slowest request while A's lock is held / hold time)", worst / held, 0.5))
    lines.append(
        verdict(
            "target 4 (B p50 under A's hammering / idle, CPU shared)",
            (median(busy_read) + median(busy_write)) / (median(idle_read) + median(idle_write)),
            16.0,
        )
    )
    return lines


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--singles", type=int, default=100)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.batches, options.singles))
