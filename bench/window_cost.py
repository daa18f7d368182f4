"""Target 1: the model view costs what its live history costs, not what the session's history costs.

Times ``GET /sessions/{id}/projection?view=model`` on a 100,000-message session whose newest compact boundary
is 1,000 messages from the end, against the same request on a 1,000-message session without a boundary,
alternating the two so that both see the same machine. Target: at most 1.2x, in every variant below.

The sessions are built as users build them: through the HTTP API, in appends of 1,000 messages (the
compactions' boundaries and summaries among them, as a runtime writes them). Autovacuum is off for the
bench database, so no statistics appear behind the benchmark's back. The view is then timed three ways, each
on a freshly started server:

- as loaded: no ANALYZE has ever run on the tables;
- generic plans: ``plan_cache_mode = force_generic_plan`` for every connection of the database, so no plan
  sees the parameters' values (what a prepared statement falls back to after five executions);
- analyzed: after ``ANALYZE``, the friendliest case for a planner.
"""

import asyncio
import time
from typing import Any

import httpx
import orjson
from sqlalchemy.engine import make_url

from bench.dataset import session_messages
from bench.harness import Server, arguments, client, database, median, ms, raw_connection, serve, verdict

BATCH = 1_000
TARGET = 1.2

Variant = tuple[str, str | None]
VARIANTS: tuple[Variant, ...] = (
    ("as loaded, no ANALYZE", None),
    ("generic plans, no ANALYZE", "ALTER DATABASE {database} SET plan_cache_mode = force_generic_plan"),
    ("after ANALYZE", "ALTER DATABASE {database} RESET plan_cache_mode; ANALYZE"),
)


async def build(http: httpx.AsyncClient, session_id: str, count: int, **options: Any) -> None:
    """The session and its messages through the API, ``BATCH`` at a time."""
    (await http.post("/sessions", json={"id": session_id})).raise_for_status()
    batch: list[dict[str, Any]] = []

    async def send() -> None:
        body = orjson.dumps({"messages": batch})
        response = await http.post(
            f"/sessions/{session_id}/messages", content=body, headers={"content-type": "application/json"}
        )
        if response.status_code != 201:
            raise RuntimeError(f"append answered {response.status_code}: {response.text[:300]}")

    for _, message_id, role, content, metadata in session_messages(session_id, count, **options):
        batch.append({"id": message_id, "role": role, "content": content, "metadata": metadata})
        if len(batch) == BATCH:
            await send()
            batch = []
    if batch:
        await send()


async def measure(server: Server, repeat: int) -> tuple[float, float, dict[str, int]]:
    """Median seconds of the long and the short session's model view, and each answer's size."""
    sizes: dict[str, int] = {}
    timings: dict[str, list[float]] = {"long": [], "short": []}
    async with client(server) as http:

        async def fetch(session_id: str) -> float:
            started = time.perf_counter()
            response = await http.get(f"/sessions/{session_id}/projection", params={"view": "model"})
            elapsed = time.perf_counter() - started
            response.raise_for_status()
            sizes[session_id] = len(response.content)
            return elapsed

        # More than five rounds, so a prepared statement has reached whatever plan it settles on.
        for _ in range(8):
            await fetch("long")
            await fetch("short")
        for round_ in range(repeat):
            # Each goes first in every other round, so neither always follows the other.
            for session_id in ("long", "short") if round_ % 2 == 0 else ("short", "long"):
                timings[session_id].append(await fetch(session_id))
    return median(timings["long"]), median(timings["short"]), sizes


async def main(database_url: str | None, long_count: int, repeat: int) -> list[str]:
    verdicts: list[str] = []
    async with database(database_url) as url:
        name = make_url(url).database
        admin = await raw_connection(url)
        await admin.execute(
            "ALTER TABLE messages SET (autovacuum_enabled = off, toast.autovacuum_enabled = off);"
            " ALTER TABLE sessions SET (autovacuum_enabled = off)"
        )
        started = time.perf_counter()
        async with serve(url) as server, client(server) as http:
            await build(http, "long", long_count, compaction_before_last=1_000)
            await build(http, "short", 1_000)
        took = time.perf_counter() - started
        print(f"dataset: {long_count:,} + 1,000 messages appended through the API in {took:.1f} s", flush=True)
        stored = await admin.fetchval("SELECT pg_total_relation_size('messages')")
        each = stored / (long_count + 1_000)
        print(f"stored: {stored / 2**20:,.0f} MiB with indexes and TOAST, {each:,.0f} bytes a message", flush=True)
        try:
            for label, setting in VARIANTS:
                if setting is not None:
                    await admin.execute(setting.format(database=f'"{name}"'))
                statistics = await admin.fetchval("SELECT count(*) FROM pg_stats WHERE tablename = 'messages'")
                # A new server, so every pooled connection starts with the database's current settings.
                async with serve(url) as server:
                    long_time, short_time, sizes = await measure(server, repeat)
                print(
                    f"{label} ({statistics} column statistics on messages): model view, {long_count:,} messages,"
                    f" boundary 1,000 from the end: {ms(long_time)} ({sizes['long']:,} bytes);"
                    f" 1,000 messages, no boundary: {ms(short_time)} ({sizes['short']:,} bytes)",
                    flush=True,
                )
                name_of = f"target 1, {label} (long window / short session)"
                verdicts.append(verdict(name_of, long_time / short_time, TARGET))
        finally:
            await admin.close()
    return verdicts


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat))
