"""Does the server give freed memory back after large answers, and at what cost in latency?

glibc keeps memory a process freed mapped for its next allocations, so after a burst of large answers the
resident set stays high with nothing alive. This compares the service without its trim
(``PROJECTOR_TRIM_MEMORY_AFTER_SECONDS=0``), with ``MALLOC_ARENA_MAX=2`` (fewer heaps for worker threads to leave
free memory in) and with a fixed ``MALLOC_MMAP_THRESHOLD_`` (every block of a megabyte or more mapped and
unmapped on its own, which also stops glibc raising the threshold as large blocks are freed), against the
service as it is: ``malloc_trim(0)`` in a worker thread once no large request has ended for a second
(``app.api.memory_return``).

Each round starts a fresh uvicorn worker per variant, taking turns, and runs on it: thirty event streams of
one caller that read nothing over sessions of four 15 MB messages, then leave; eight clients reading those
sessions' pages at once; then, one at a time, the model view of a 10,000-message session (23 MB) and a
30 MB page, timed. The resident set is read once it settles after each step.

Then what a trim costs, in one process through the in-process app (as ``bench.overhead`` does), rounds with
and without it taking turns: after a burst of large answers, ``malloc_trim(0)`` in a worker thread while
``/healthz`` is asked one request after another, then the first model view and the first 30 MB page after
it, which find their memory given back. Figures are in docs/performance.md ("Memory the allocator keeps").
"""

import asyncio
import os
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx
import psutil  # type: ignore[import-untyped]

from app.api.memory_return import glibc_malloc_trim
from app.main import create_app
from app.settings import Settings
from bench.dataset import seed_session
from bench.harness import Server, arguments, database, in_process, serve
from bench.stream_memory import MIB, open_silent, settled_rss, write_sessions

LARGE_SESSIONS = 3
SILENT_STREAMS = 30
READERS = 8


@dataclass(frozen=True)
class Variant:
    name: str
    environment: dict[str, str] = field(default_factory=dict)


NO_TRIM = {"PROJECTOR_TRIM_MEMORY_AFTER_SECONDS": "0"}
VARIANTS = [
    Variant("no trim", environment=NO_TRIM),
    Variant("no trim, MALLOC_ARENA_MAX=2", environment={**NO_TRIM, "MALLOC_ARENA_MAX": "2"}),
    Variant("no trim, MALLOC_MMAP_THRESHOLD_=1 MiB", environment={**NO_TRIM, "MALLOC_MMAP_THRESHOLD_": str(MIB)}),
    Variant("trim once quiet for 1 s (the service)"),
]


@dataclass
class Figures:
    after_streams: list[int] = field(default_factory=list)
    after_reads: list[int] = field(default_factory=list)
    after_timed: list[int] = field(default_factory=list)
    model_view: list[float] = field(default_factory=list)
    large_page: list[float] = field(default_factory=list)


async def read_all_pages(http: httpx.AsyncClient, session_id: str) -> None:
    cursor: str | None = None
    while True:
        params = {"limit": "4", **({"after": cursor} if cursor else {})}
        body = (await http.get(f"/sessions/{session_id}/messages", params=params)).json()
        if not body["hasMore"]:
            return
        cursor = body["nextCursor"]


async def timed(http: httpx.AsyncClient, path: str, params: dict[str, str]) -> float:
    started = time.perf_counter()
    response = await http.get(path, params=params)
    response.raise_for_status()
    return time.perf_counter() - started


@contextmanager
def environment(variables: dict[str, str]) -> Iterator[None]:
    """``variables`` in this process's environment, which ``serve`` hands to the server it starts."""
    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


async def one_round(url: str, variant: Variant, figures: Figures) -> None:
    with environment(variant.environment):
        async with serve(url, streams_per_caller="1000") as server:
            await burst(server, figures)


async def burst(server: Server, figures: Figures) -> None:
    """The steps of a round, on one fresh server: the RSS after each, and the timed requests."""
    worker = psutil.Process(server.pid)
    port = int(server.base_url.rsplit(":", 1)[1])
    silent = [
        await open_silent(port, f"/sessions/large{number % LARGE_SESSIONS}/events?after=0")
        for number in range(SILENT_STREAMS)
    ]
    await settled_rss(worker)
    for writer, _ in silent:
        writer.close()
    figures.after_streams.append(await settled_rss(worker))
    async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as http:
        await asyncio.gather(*(read_all_pages(http, f"large{reader % LARGE_SESSIONS}") for reader in range(READERS)))
        figures.after_reads.append(await settled_rss(worker))
        for _ in range(5):
            figures.model_view.append(await timed(http, "/sessions/s10k/projection", {"view": "model"}))
            figures.large_page.append(await timed(http, "/sessions/large0/messages", {"limit": "2"}))
        figures.after_timed.append(await settled_rss(worker))


def report(variant: Variant, figures: Figures) -> str:
    def rss(values: list[int]) -> str:
        return "/".join(f"{value / MIB:,.0f}" for value in values)

    return (
        f"{variant.name:<38} RSS MiB after streams {rss(figures.after_streams)}, after reads"
        f" {rss(figures.after_reads)}, after timed {rss(figures.after_timed)};"
        f" model view median {statistics.median(figures.model_view) * 1000:.0f} ms,"
        f" 30 MB page median {statistics.median(figures.large_page) * 1000:.0f} ms"
    )


@dataclass
class TrimCosts:
    trim: list[float] = field(default_factory=list)
    slowest_probe: list[float] = field(default_factory=list)
    first_model_view: list[float] = field(default_factory=list)
    first_large_page: list[float] = field(default_factory=list)


async def probe_while(http: httpx.AsyncClient, running: "asyncio.Future[object]", *, at_least: float) -> float:
    """The slowest ``/healthz`` asked one after another until ``running`` is done and ``at_least`` passed."""
    slowest = 0.0
    started = time.perf_counter()
    while not running.done() or time.perf_counter() - started < at_least:
        slowest = max(slowest, await timed(http, "/healthz", {}))
        await asyncio.sleep(0)  # the in-process /healthz may never yield to the loop, which ends the trim
    return slowest


async def trim_costs(url: str, rounds: int) -> None:
    trim = glibc_malloc_trim()
    assert trim is not None, "malloc_trim is glibc's"
    settings = Settings(database_url=None, migrate_on_start=False, log_level="warning", trim_memory_after_seconds=0)
    costs = {True: TrimCosts(), False: TrimCosts()}
    loop = asyncio.get_running_loop()
    async with in_process(create_app(settings, database_url=url)) as http:
        for round_number in range(2 * rounds + 2):
            trimming = round_number % 2 == 0
            await asyncio.gather(
                *(read_all_pages(http, f"large{reader % LARGE_SESSIONS}") for reader in range(READERS))
            )
            await timed(http, "/sessions/s10k/projection", {"view": "model"})
            await asyncio.sleep(0.3)
            started = time.perf_counter()
            running = loop.run_in_executor(None, trim if trimming else time.sleep, 0)
            slowest = await probe_while(http, running, at_least=0.15)
            took = time.perf_counter() - started
            if round_number < 2:
                continue  # warming up
            figures = costs[trimming]
            figures.trim.append(took)
            figures.slowest_probe.append(slowest)
            figures.first_model_view.append(await timed(http, "/sessions/s10k/projection", {"view": "model"}))
            figures.first_large_page.append(await timed(http, "/sessions/large0/messages", {"limit": "2"}))
    for trimming, figures in costs.items():
        print(
            f"{'with a trim' if trimming else 'without':<12} probing for {ms_median(figures.trim)} (median), slowest"
            f" /healthz {ms_median(figures.slowest_probe)} (median of rounds), then the first model view"
            f" {ms_median(figures.first_model_view)}, the first 30 MB page {ms_median(figures.first_large_page)}",
            flush=True,
        )


def ms_median(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ms"


async def main(database_url: str | None, rounds: int, parts: list[str]) -> None:
    async with database(database_url) as url:
        await seed_session(url, "s10k", 10_000)
        async with serve(url) as server:
            await write_sessions(server.base_url, LARGE_SESSIONS)
        if "latency" in parts:
            await trim_costs(url, rounds * 3)
        if "rss" not in parts:
            return
        figures = {variant.name: Figures() for variant in VARIANTS}
        for round_number in range(rounds):
            for variant in VARIANTS:
                await one_round(url, variant, figures[variant.name])
            print(f"round {round_number + 1} of {rounds} done", flush=True)
        for variant in VARIANTS:
            print(report(variant, figures[variant.name]), flush=True)


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parts", nargs="+", choices=["rss", "latency"], default=["rss", "latency"])
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.rounds, options.parts))
