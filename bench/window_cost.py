"""Target 1: the model view costs what its window costs, not what the history costs.

Times ``GET /sessions/{id}/projection?view=model`` on a 100,000-message session whose newest compact boundary
is 1,000 messages from the end, against the same request on a 1,000-message session without a boundary,
alternating the two so that both see the same machine. Target: at most 1.5x.
"""

import asyncio
import time

from bench.dataset import write_session
from bench.harness import arguments, client, database, median, ms, raw_connection, serve, verdict


async def main(database_url: str | None, long_count: int, repeat: int) -> list[str]:
    async with database(database_url) as url:
        connection = await raw_connection(url)
        started = time.perf_counter()
        await write_session(connection, "long", long_count, compaction_before_last=1_000)
        await write_session(connection, "short", 1_000)
        await connection.close()
        print(f"dataset: {long_count:,} + 1,000 messages written in {time.perf_counter() - started:.1f} s", flush=True)
        async with serve(url) as server, client(server) as http:
            sizes: dict[str, int] = {}
            timings: dict[str, list[float]] = {"long": [], "short": []}

            async def fetch(session_id: str) -> float:
                started = time.perf_counter()
                response = await http.get(f"/sessions/{session_id}/projection", params={"view": "model"})
                elapsed = time.perf_counter() - started
                response.raise_for_status()
                sizes[session_id] = len(response.content)
                return elapsed

            for _ in range(3):
                await fetch("long")
                await fetch("short")
            for _ in range(repeat):
                timings["long"].append(await fetch("long"))
                timings["short"].append(await fetch("short"))
    long_time, short_time = median(timings["long"]), median(timings["short"])
    print(f"model view, {long_count:,} messages, boundary 1,000 from the end: {ms(long_time)}", end=" ")
    print(f"({sizes['long']:,} bytes)")
    print(f"model view, 1,000 messages, no boundary: {ms(short_time)} ({sizes['short']:,} bytes)")
    return [verdict("target 1 (long window / short session)", long_time / short_time, 1.5)]


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat))
