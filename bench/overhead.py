"""Target 2: the service's overhead over the floor of reading the same rows.

On a 10,000-message session without a boundary (tool results of 2-8 KB), in one process against one
database, times (a) the floor: fetching the session's rows raw with asyncpg (jsonb decoded with orjson) and
encoding them with orjson; (b) ``GET /sessions/{id}/projection?view=model`` and (c) ``POST /chat`` for
anthropic, both through the real ASGI app (middleware, routing, encoding) over an in-process transport,
(c) cold: no window or turn kept from an earlier request; and (d) the next turn's ``POST /chat``: two
messages appended (not timed) after the previous ``/chat``, whose window and turn the service kept (so it
builds only the last turn, ``app.services.turn_splice``). The four are interleaved
so they see the same machine. Targets: (b) and (c) each at most 2x (a), (d) at most 0.5x (a).
"""

import asyncio
import time

import orjson
from fastapi import FastAPI

from bench.dataset import seed_session
from bench.harness import (
    TENANT,
    arguments,
    database,
    forget_kept,
    in_process,
    median,
    ms,
    reading_connection,
    service_app,
    verdict,
)

FLOOR_SQL = (
    "SELECT id, session_id, seq, role, kind, content, metadata, run_id, created_at, token_estimate"
    " FROM messages WHERE tenant_id = $1 AND session_id = $2 ORDER BY seq"
)
CHAT_BODY = {"sessionId": "s10k", "provider": "anthropic", "model": "claude-sonnet-4-5"}


def has_chat(app: FastAPI) -> bool:
    return "/chat" in app.openapi()["paths"]


async def main(database_url: str | None, count: int, repeat: int) -> list[str]:
    async with database(database_url) as url:
        started = time.perf_counter()
        await seed_session(url, "s10k", count)
        connection = await reading_connection(url)
        print(f"dataset: {count:,} messages written in {time.perf_counter() - started:.1f} s", flush=True)
        app = service_app(url)
        chat = has_chat(app)
        async with in_process(app) as http:

            async def floor() -> int:
                rows = await connection.fetch(FLOOR_SQL, TENANT, "s10k")
                return len(orjson.dumps([dict(row) for row in rows]))

            async def projection() -> int:
                response = await http.get("/sessions/s10k/projection", params={"view": "model"})
                response.raise_for_status()
                return len(response.content)

            async def chat_payload() -> int:
                response = await http.post("/chat", json=CHAT_BODY)
                response.raise_for_status()
                return len(response.content)

            turn = iter(range(1, 1_000_000))

            async def next_turn() -> None:
                n = next(turn)
                messages = [
                    {"id": f"next-u{n}", "role": "user", "content": f"and now step {n}"},
                    {"id": f"next-a{n}", "role": "assistant", "content": f"step {n} done"},
                ]
                response = await http.post("/sessions/s10k/messages", json={"messages": messages})
                response.raise_for_status()

            actions = {"floor": floor, "projection": projection}
            if chat:
                actions["chat"] = chat_payload
                actions["next turn"] = chat_payload
            timings: dict[str, list[float]] = {name: [] for name in actions}
            sizes: dict[str, int] = {}
            for round_ in range(repeat + 2):
                for name, action in actions.items():
                    if name == "chat":
                        forget_kept(app)
                    if name == "next turn":
                        await next_turn()
                    started = time.perf_counter()
                    sizes[name] = await action()
                    if round_ >= 2:
                        timings[name].append(time.perf_counter() - started)
        await connection.close()
    floor_time = median(timings["floor"])
    print(f"floor (asyncpg fetch + orjson decode/encode), {count:,} rows: {ms(floor_time)} ({sizes['floor']:,} bytes)")
    lines = []
    measured = (
        ("projection", "model projection", 2.0),
        ("chat", "POST /chat anthropic, cold", 2.0),
        ("next turn", "POST /chat anthropic, the next turn (2 messages appended)", 0.5),
    )
    for name, label, target in measured:
        if name not in timings:
            print(f"{label}: not measured (the route is not on this build)")
            continue
        took = median(timings[name])
        print(f"{label}: {ms(took)} ({sizes[name]:,} bytes); {round_spread(timings[name], timings['floor'], target)}")
        lines.append(verdict(f"target 2 ({label} / floor)", took / floor_time, target))
    return lines


def round_spread(timings: list[float], floor_timings: list[float], target: float) -> str:
    """Each round's ratio to the floor timed beside it: how far one run's median verdict can be trusted when
    the machine's speed moves between rounds."""
    ratios = sorted(took / floor for took, floor in zip(timings, floor_timings, strict=True))
    within = sum(ratio <= target for ratio in ratios)
    return f"round by round {ratios[0]:.2f}-{ratios[-1]:.2f}x, {within} of {len(ratios)} rounds within {target:g}x"


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=10)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat))
