"""A debug page costs what the model view costs, not what the history costs.

A debug page judges each of its messages against the whole model input, so it reads the live history beside
its page. Times ``GET /sessions/{id}/projection?view=debug&limit=50`` (a page from the start of the session,
before its newest compaction, and a page inside the window) against the model view of the same session: a
session whose newest compact boundary is 1,000 messages from the end, alternating the requests so that all
see the same machine. Target: each debug page at most 1.5x the model view.
"""

import asyncio
import time

from bench.dataset import write_session
from bench.harness import arguments, client, database, median, ms, raw_connection, serve, verdict


async def main(database_url: str | None, count: int, repeat: int) -> list[str]:
    async with database(database_url) as url:
        connection = await raw_connection(url)
        await write_session(connection, "long", count, compaction_before_last=1_000)
        await connection.close()
        async with serve(url) as server, client(server) as http:
            requests = {
                "model view": {"view": "model"},
                "debug page before the window": {"view": "debug", "limit": "50"},
                "debug page inside the window": {"view": "debug", "limit": "50", "order": "desc"},
            }
            timings: dict[str, list[float]] = {name: [] for name in requests}

            async def fetch(params: dict[str, str]) -> float:
                started = time.perf_counter()
                response = await http.get("/sessions/long/projection", params=params)
                elapsed = time.perf_counter() - started
                response.raise_for_status()
                return elapsed

            for round_ in range(repeat + 3):
                for name, params in requests.items():
                    elapsed = await fetch(params)
                    if round_ >= 3:
                        timings[name].append(elapsed)
    model = median(timings["model view"])
    for name, values in timings.items():
        print(f"{name}, {count:,} messages, boundary 1,000 from the end: {ms(median(values))}")
    return [
        verdict(f"{name} / model view", median(timings[name]) / model, 1.5) for name in requests if name != "model view"
    ]


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat))
