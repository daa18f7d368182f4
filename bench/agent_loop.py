"""The agent loop: what agents do to the service, turn after turn, on many sessions at once.

Each session starts with a history whose model window is a little under ``--window-tokens`` (written with
COPY, no compaction, tool results of 2-8 KB), so over the run its window is about that size. Every session
runs its own loop of ``--turns`` turns, all sessions at once: create the turn's run (its model, system prompt
and tools, as opencode makes a run a turn); append the user's message; ``POST /chat`` (anthropic) naming the
run, for the whole window; append the assistant's message (a text and three tool calls) and the three tool
results in one batch, every message naming the run. The service runs as uvicorn with ``--workers`` processes.

Reported: turns per second, p50 and p99 of each step, and ``/chat`` against the raw floor on the same rows
(``bench.harness.reading_connection`` fetching the session's rows, jsonb decoded by orjson inside asyncpg).
Under load, the floor is fetched by each loop right after its ``/chat``, from the same server; one at a time,
afterwards, ``/chat`` and the floor take turns on a few sessions, and the floor is also given with the rows
encoded by orjson (``bench.overhead``'s floor).

By default the run is made twice on one streaming pair built from the embedded PostgreSQL's binaries
(``tests.scale.streaming``), each time on fresh, identical sessions: reads on the primary alone, then reads on
the replica (``DATABASE_READ_URL``), where each ``/chat`` sends back its append's ``Projector-Consistency``
token, as a client that must see its own message does. ``--database-url`` (and ``--read-url``) run on servers
of yours instead.
"""

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import httpx
import orjson
from sqlalchemy.engine import make_url

from app.engine.tokens import estimate_tokens
from app.store import migrations
from bench.dataset import COLUMNS, Text, session_rows
from bench.harness import (
    TENANT,
    arguments,
    asyncpg_url,
    database,
    median,
    ms,
    percentile,
    plain_dsn,
    raw_connection,
    reading_connection,
    serve,
)
from bench.overhead import FLOOR_SQL
from tests.scale.streaming import replayed_everything, streaming_pair

MODEL = "claude-sonnet-4-5"
TOKEN = "Projector-Consistency"
STEPS = ("create run", "append user", "/chat", "append assistant + tool results")
SYSTEM = "You are a careful coding agent. Read before you edit."
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]
TEXT = Text(23)
SEED_VARIANTS = 50
"""Session ``i`` of every run is written from seed ``i % 50``, so the runs read identical histories."""


@dataclass
class Figures:
    label: str
    sessions: int
    turns: int
    elapsed: float = 0.0
    steps: dict[str, list[float]] = field(default_factory=lambda: {step: [] for step in STEPS})
    floor: list[float] = field(default_factory=list)
    payload_bytes: list[int] = field(default_factory=list)
    alone_chat: list[float] = field(default_factory=list)
    alone_fetch: list[float] = field(default_factory=list)
    alone_fetch_encode: list[float] = field(default_factory=list)


def seed_messages(window_tokens: int, turns: int) -> tuple[int, int]:
    """How many seeded messages put a session's window at ``window_tokens`` halfway through the run, and
    the tokens they hold."""
    added = sum(
        estimate_tokens(message["content"])
        for turn in range(turns)
        for message in [user_message("probe", turn), *answer_and_results("probe", turn)]
    )
    target = window_tokens - added // 2
    tokens = count = 0
    for row in session_rows("probe", 100_000):
        if tokens >= target:
            break
        tokens += row[9]
        count += 1
    return count, tokens


def run_id(session_id: str, turn: int) -> str:
    return f"{session_id}-run{turn}"


def user_message(session_id: str, turn: int) -> dict[str, Any]:
    content = f"Turn {turn}: {TEXT.take(40, 200)}"
    return {"id": f"{session_id}-u{turn}", "runId": run_id(session_id, turn), "role": "user", "content": content}


def answer_and_results(session_id: str, turn: int) -> list[dict[str, Any]]:
    """The assistant's text and three calls, and their results. The calls' ids are new to the session, as a
    provider issues them (``bench.dataset`` numbers the seeded history's ``call_<turn>_<k>``): an id the
    history already holds is renamed in the payload, which no turn can be kept across, so every ``/chat``
    would build the whole window."""
    calls = [
        {"type": "tool-call", "toolCallId": f"loop_{turn}_{k}", "toolName": "read_file", "input": {"path": f"{k}.py"}}
        for k in range(3)
    ]
    run = run_id(session_id, turn)
    answer = {
        "id": f"{session_id}-a{turn}",
        "runId": run,
        "role": "assistant",
        "content": [{"type": "text", "text": TEXT.take(100, 600)}, *calls],
        "metadata": {"finishReason": "tool-calls"},
    }
    results = [
        {
            "id": f"{session_id}-r{turn}-{k}",
            "runId": run,
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": f"loop_{turn}_{k}",
                    "toolName": "read_file",
                    "output": {"type": "text", "value": TEXT.take(2048, 8192)},
                }
            ],
        }
        for k in range(3)
    ]
    return [answer, *results]


class FloorReaders:
    """A few reading connections shared by the loops, so the floor never waits on a connect."""

    def __init__(self, connections: list[asyncpg.Connection]) -> None:
        self._idle: asyncio.Queue[asyncpg.Connection] = asyncio.Queue()
        for connection in connections:
            self._idle.put_nowait(connection)
        self._all = connections

    async def fetch(self, session_id: str) -> tuple[list[asyncpg.Record], float]:
        connection = await self._idle.get()
        try:
            started = time.perf_counter()
            rows = await connection.fetch(FLOOR_SQL, TENANT, session_id)
            return rows, time.perf_counter() - started
        finally:
            self._idle.put_nowait(connection)

    async def close(self) -> None:
        for connection in self._all:
            await connection.close()


async def timed(request: Any) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    response = await request
    return response, time.perf_counter() - started


def checked(response: httpx.Response, status: int) -> httpx.Response:
    if response.status_code != status:
        raise RuntimeError(f"{response.request.url.path} answered {response.status_code}: {response.text[:300]}")
    return response


async def session_loop(
    http: httpx.AsyncClient, floor: FloorReaders, session_id: str, figures: Figures, *, send_tokens: bool
) -> None:
    for turn in range(figures.turns):
        run = {"id": run_id(session_id, turn), "model": f"anthropic/{MODEL}", "system": SYSTEM, "tools": TOOLS}
        created, took = await timed(http.post(f"/sessions/{session_id}/runs", json=run))
        checked(created, 201)
        figures.steps["create run"].append(took)
        appended, took = await timed(
            http.post(f"/sessions/{session_id}/messages", json={"messages": [user_message(session_id, turn)]})
        )
        checked(appended, 201)
        figures.steps["append user"].append(took)
        headers = {TOKEN: appended.headers[TOKEN]} if send_tokens and TOKEN in appended.headers else {}
        chat_body = {"sessionId": session_id, "provider": "anthropic", "runId": run["id"], "maxOutputTokens": 8192}
        chat, took = await timed(http.post("/chat", json=chat_body, headers=headers))
        checked(chat, 200)
        figures.steps["/chat"].append(took)
        figures.payload_bytes.append(len(chat.content))
        _, floor_took = await floor.fetch(session_id)
        figures.floor.append(floor_took)
        batch = {"messages": answer_and_results(session_id, turn)}
        results, took = await timed(http.post(f"/sessions/{session_id}/messages", json=batch))
        checked(results, 201)
        figures.steps["append assistant + tool results"].append(took)


async def one_at_a_time(
    http: httpx.AsyncClient, floor: FloorReaders, session_ids: list[str], figures: Figures, rounds: int
) -> None:
    """``/chat`` and the floor taking turns on the same sessions with nothing else running."""
    for _ in range(rounds):
        for session_id in session_ids:
            body = {"sessionId": session_id, "provider": "anthropic", "model": MODEL, "maxOutputTokens": 8192}
            chat, took = await timed(http.post("/chat", json=body))
            checked(chat, 200)
            figures.alone_chat.append(took)
            rows, fetched = await floor.fetch(session_id)
            started = time.perf_counter()
            orjson.dumps([dict(row) for row in rows])
            figures.alone_fetch.append(fetched)
            figures.alone_fetch_encode.append(fetched + time.perf_counter() - started)


async def run_loop(
    primary_url: str,
    read_url: str | None,
    session_ids: list[str],
    figures: Figures,
    *,
    workers: int,
) -> Figures:
    settings = {"database_read_url": read_url} if read_url else {}
    floor = FloorReaders([await reading_connection(read_url or primary_url) for _ in range(4)])
    try:
        async with serve(primary_url, workers=workers, **settings) as server, contextlib.AsyncExitStack() as stack:
            # One client (one connection) a session, as each agent has its own: one client pooling 50
            # connections walked them all on every request (httpcore), half the bench's CPU on 2 cores.
            clients = [
                await stack.enter_async_context(httpx.AsyncClient(base_url=server.base_url, timeout=300.0))
                for _ in session_ids
            ]
            warm = {"sessionId": session_ids[0], "provider": "anthropic", "model": MODEL}
            for _ in range(2 * workers):
                checked(await clients[0].post("/chat", json=warm), 200)
            started = time.perf_counter()
            await asyncio.gather(
                *(
                    session_loop(http, floor, sid, figures, send_tokens=read_url is not None)
                    for http, sid in zip(clients, session_ids, strict=True)
                )
            )
            figures.elapsed = time.perf_counter() - started
            await one_at_a_time(clients[0], floor, session_ids[:3], figures, rounds=4)
    finally:
        await floor.close()
    return figures


def report(figures: Figures, seeded: tuple[int, int]) -> list[str]:
    turns = figures.sessions * figures.turns
    chat_p50 = percentile(figures.steps["/chat"], 0.5)
    floor_p50 = percentile(figures.floor, 0.5)
    alone_ratio = median(figures.alone_chat) / median(figures.alone_fetch)
    alone_encode_ratio = median(figures.alone_chat) / median(figures.alone_fetch_encode)
    print(f"\n-- {figures.label}")
    print(
        f"{figures.sessions} sessions x {figures.turns} turns, each seeded with {seeded[0]} messages"
        f" ({seeded[1]:,} tokens), a turn creating its run and adding 4 messages after the user's;"
        f" /chat payload {median([float(size) for size in figures.payload_bytes]) / 1e6:.2f} MB (median)"
    )
    print(f"turns per second: {turns / figures.elapsed:.1f} ({turns} turns in {figures.elapsed:.1f} s)")
    for step in STEPS:
        timings = figures.steps[step]
        print(f"{step}: p50 {ms(percentile(timings, 0.5))}, p99 {ms(percentile(timings, 0.99))}")
    print(f"floor (reading connection fetch of the same rows) under load: p50 {ms(floor_p50)}")
    print(f"/chat p50 / floor p50 under load: {chat_p50 / floor_p50:.2f}x")
    print(
        f"one at a time: /chat {ms(median(figures.alone_chat))}, floor fetch {ms(median(figures.alone_fetch))}"
        f" ({alone_ratio:.2f}x), fetch + orjson encode {ms(median(figures.alone_fetch_encode))}"
        f" ({alone_encode_ratio:.2f}x)"
    )
    return [
        f"agent loop, {figures.label}: {turns / figures.elapsed:.1f} turns/s; /chat p50 {ms(chat_p50)}"
        f" = {chat_p50 / floor_p50:.2f}x the floor under load, {alone_ratio:.2f}x one at a time (reported)"
    ]


async def seed(url: str, session_ids: list[str], count: int) -> None:
    """The sessions and their histories in one transaction (``bench.dataset``'s rows, COPY in chunks), then
    one ANALYZE, as ``bench.dataset.write_session`` does per session."""
    connection = await raw_connection(url)
    try:
        async with connection.transaction():
            await connection.executemany(
                "INSERT INTO sessions (tenant_id, id, title, last_seq, revision) VALUES ($1, $2, $3, $4, 1)",
                [(TENANT, session_id, "agent loop", count) for session_id in session_ids],
            )
            histories: dict[int, list[tuple[Any, ...]]] = {}
            chunk: list[tuple[Any, ...]] = []
            for index, session_id in enumerate(session_ids):
                variant = index % SEED_VARIANTS
                if variant not in histories:
                    histories[variant] = list(session_rows("template", count, seed=variant))
                # Columns: tenant, session, seq, id, then the rest (bench.dataset.COLUMNS).
                history = histories[variant]
                chunk += [(row[0], session_id, row[2], f"{session_id}-m{row[2]}", *row[4:]) for row in history]
                if len(chunk) >= 20_000:
                    await connection.copy_records_to_table("messages", records=chunk, columns=COLUMNS)
                    chunk = []
            if chunk:
                await connection.copy_records_to_table("messages", records=chunk, columns=COLUMNS)
        await connection.execute("ANALYZE messages")
    finally:
        await connection.close()


@contextlib.asynccontextmanager
async def streaming_database() -> AsyncIterator[tuple[str, str]]:
    """A fresh migrated database on a new streaming pair: (primary URL, replica URL)."""
    with streaming_pair() as pair:
        name = f"projector_bench_{uuid.uuid4().hex[:10]}"
        admin = await asyncpg.connect(plain_dsn(pair.primary_url()))
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
        finally:
            await admin.close()
        primary = pair.primary_url(name)
        await asyncio.to_thread(migrations.upgrade, primary)
        yield primary, pair.replica_url(name)


async def main(
    database_url: str | None,
    read_url: str | None,
    sessions: int,
    turns: int,
    window_tokens: int,
    workers: int,
) -> list[str]:
    seeded = seed_messages(window_tokens, turns)
    count = seeded[0]
    runs = [("reads on the primary alone", "p", False), ("reads on a streaming replica", "r", True)]
    if database_url is not None:
        context: contextlib.AbstractAsyncContextManager[Any] = _given(database_url, read_url)
    else:
        context = streaming_database()
    lines: list[str] = []
    async with context as (primary_url, replica_url):
        if replica_url is None:
            runs = runs[:1]
        planned = {prefix: [f"{prefix}{index}" for index in range(sessions)] for _, prefix, _ in runs}
        started = time.perf_counter()
        for session_ids in planned.values():
            await seed(primary_url, session_ids, count)
        print(f"seeded {sessions * len(runs)} sessions of {count} messages in {time.perf_counter() - started:.1f} s")
        if replica_url is not None:
            await replayed_everything(primary_url, replica_url)
        for label, prefix, on_replica in runs:
            figures = Figures(label, sessions, turns)
            await run_loop(primary_url, replica_url if on_replica else None, planned[prefix], figures, workers=workers)
            lines += report(figures, seeded)
    return lines


@contextlib.asynccontextmanager
async def _given(database_url: str, read_url: str | None) -> AsyncIterator[tuple[str, str | None]]:
    """A fresh database on the given server; a physical replica of it has the database too, under its name."""
    async with database(database_url) as url:
        if read_url is None:
            yield url, None
        else:
            yield (
                url,
                make_url(asyncpg_url(read_url))
                .set(database=make_url(url).database)
                .render_as_string(hide_password=False),
            )


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument(
        "--read-url", default=None, help="a streaming replica of --database-url's server (same user, any database)"
    )
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=6, help="turns per session")
    parser.add_argument("--window-tokens", type=int, default=150_000)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    options = parser.parse_args()
    for line in asyncio.run(
        main(
            options.database_url,
            options.read_url,
            options.sessions,
            options.turns,
            options.window_tokens,
            options.workers,
        )
    ):
        print(line)
