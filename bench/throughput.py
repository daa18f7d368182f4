"""Target 3: the model projection of a 1,000-message session under 16 concurrent clients on one uvicorn worker.

Reports requests/s and p50/p99 latency for full projections and for ETag revalidations (``If-None-Match``
answered 304), both at 16 concurrent clients, and the 304's cost relative to a full projection (the ratio of
their throughputs, and of their latencies one request at a time). Target: a 304 at least 5x cheaper.
"""

import asyncio
import time
from typing import Any

import httpx

from bench.dataset import write_session
from bench.harness import arguments, client, database, median, ms, percentile, raw_connection, samples, serve, verdict

PATH = "/sessions/s1k/projection"
PARAMS = {"view": "model"}


async def load(
    http: httpx.AsyncClient, *, clients: int, total: int, headers: dict[str, str], status: int
) -> dict[str, Any]:
    """``total`` requests spread over ``clients`` concurrent loops; returns throughput and latencies."""
    latencies: list[float] = []
    remaining = total

    async def one_client() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            started = time.perf_counter()
            response = await http.get(PATH, params=PARAMS, headers=headers)
            latencies.append(time.perf_counter() - started)
            if response.status_code != status:
                raise RuntimeError(f"expected {status}, got {response.status_code}")

    started = time.perf_counter()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    elapsed = time.perf_counter() - started
    return {"rps": total / elapsed, "p50": percentile(latencies, 0.5), "p99": percentile(latencies, 0.99)}


async def main(database_url: str | None, clients: int, full_requests: int, revalidations: int) -> list[str]:
    async with database(database_url) as url:
        connection = await raw_connection(url)
        await write_session(connection, "s1k", 1_000)
        await connection.close()
        async with serve(url) as server, client(server, connections=clients) as http:
            first = await http.get(PATH, params=PARAMS)
            first.raise_for_status()
            etag = {"If-None-Match": first.headers["etag"]}
            print(f"model view of 1,000 messages: {len(first.content):,} bytes", flush=True)
            full_alone = await samples(lambda: http.get(PATH, params=PARAMS), repeat=15)
            revalidated_alone = await samples(lambda: http.get(PATH, params=PARAMS, headers=etag), repeat=100)
            full = await load(http, clients=clients, total=full_requests, headers={}, status=200)
            revalidated = await load(http, clients=clients, total=revalidations, headers=etag, status=304)
    for label, figures in (("full projection", full), ("ETag revalidation (304)", revalidated)):
        print(
            f"{label}, {clients} clients: {figures['rps']:.1f} requests/s,"
            f" p50 {ms(figures['p50'])}, p99 {ms(figures['p99'])}"
        )
    print(f"one at a time: full {ms(median(full_alone))}, 304 {ms(median(revalidated_alone))}")
    return [
        verdict("target 3 (304 throughput / full throughput)", revalidated["rps"] / full["rps"], 5.0, at_most=False),
        verdict(
            "target 3 (full latency / 304 latency, one at a time)",
            median(full_alone) / median(revalidated_alone),
            5.0,
            at_most=False,
        ),
    ]


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=160, help="full projections under load")
    parser.add_argument("--revalidations", type=int, default=2_000, help="304s under load")
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.clients, options.requests, options.revalidations))
