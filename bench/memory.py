"""Target 5: serving long sessions page by page keeps the server's memory flat as sessions grow.

Sessions of growing length (10,000 messages and more, tool results of 2-8 KB) are walked from the first
page to the last, 500 messages a page, through ``GET /sessions/{id}/messages`` and the paged transcript
projection, on one uvicorn worker whose resident set size is sampled every few milliseconds. A page costs
what a page holds, so the peak must not grow with the session. Target: the largest session's peak within
10% of the smallest's.
"""

import asyncio
import threading
import time

import httpx
import psutil  # type: ignore[import-untyped]

from bench.dataset import write_session
from bench.harness import arguments, client, database, raw_connection, serve, verdict

MIB = 1024 * 1024


class PeakRss:
    """Samples a process's RSS on a thread, so the sampling never waits on the benchmark's event loop."""

    def __init__(self, pid: int, interval: float = 0.002) -> None:
        self._process = psutil.Process(pid)
        self._interval = interval
        self._stop = threading.Event()
        self.peak = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._process.memory_info().rss)
            time.sleep(self._interval)

    def __enter__(self) -> "PeakRss":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


async def walk(http: httpx.AsyncClient, path: str, params: dict[str, str | int]) -> int:
    """Every page of ``path``, following ``nextCursor``; returns the number of pages."""
    cursor: str | None = None
    pages = 0
    while True:
        response = await http.get(path, params={**params, **({"after": cursor} if cursor else {})})
        response.raise_for_status()
        pages += 1
        body = response.json()
        if not body["hasMore"]:
            return pages
        cursor = body["nextCursor"]


async def main(database_url: str | None, sizes: list[int]) -> list[str]:
    peaks: dict[int, int] = {}
    async with database(database_url) as url:
        connection = await raw_connection(url)
        started = time.perf_counter()
        for size in sizes:
            await write_session(connection, f"s{size}", size)
        await connection.close()
        print(f"dataset: sessions of {', '.join(f'{size:,}' for size in sizes)} messages", end=" ")
        print(f"written in {time.perf_counter() - started:.1f} s", flush=True)
        async with serve(url) as server, client(server) as http:
            # Warm up every code path on a small walk first, so the first measured session pays no imports.
            await walk(http, f"/sessions/s{sizes[0]}/messages", {"limit": 500})
            await walk(http, f"/sessions/s{sizes[0]}/projection", {"view": "transcript", "limit": 500})
            for size in sizes:
                before = psutil.Process(server.pid).memory_info().rss
                with PeakRss(server.pid) as sampler:
                    pages = await walk(http, f"/sessions/s{size}/messages", {"limit": 500})
                    pages += await walk(http, f"/sessions/s{size}/projection", {"view": "transcript", "limit": 500})
                peaks[size] = sampler.peak
                print(
                    f"{size:>7,} messages, {pages} pages: server RSS {before / MIB:.1f} MiB before,"
                    f" peak {sampler.peak / MIB:.1f} MiB",
                    flush=True,
                )
    smallest, largest = min(sizes), max(sizes)
    return [verdict(f"target 5 (peak RSS at {largest:,} / at {smallest:,})", peaks[largest] / peaks[smallest], 1.1)]


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    options = parser.parse_args()
    asyncio.run(main(options.database_url, sorted(options.sizes)))
