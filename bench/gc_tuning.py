"""What the service's cycle-collector setting (``app.main.tune_garbage_collection``) earns, and what pausing
the collector during requests would add to it.

On the 10,000-message session of ``bench.overhead``, in one process through the real ASGI app, times
``GET /sessions/{id}/projection?view=model`` and a cold ``POST /chat`` (anthropic, nothing kept from an earlier
request) under four settings: the service's (start-up objects frozen, thresholds ``app.main.GC_THRESHOLDS``);
the service's with the collector off for the whole request (an upper bound for any pause around the
synchronous builds); the service's with young objects collected every 10,000 allocations (10,000, 50, 100:
often enough to run in the middle of such a request); and CPython's (nothing frozen, 700, 10, 10). The
settings take turns every round, in a rotating order (the first request after a switch runs slower), so all
see the same machine. Prints medians, the collections each request ran and each setting's time over the
service's. A diagnostic, not a target.

Those requests find a young generation the last request left nearly empty (a cold request's window is freed
before the next one). A process serving many long sessions keeps windows until newer ones evict them, and
the collector walks what they hold: the last figures (``--sessions``) come from cold requests taking turns on
16 sessions, more than the reuse memory holds, under CPython's setting, the earlier one and the service's.
"""

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable

import httpx

from app.main import GC_THRESHOLDS
from bench.cold_chat import CollectorClock
from bench.dataset import seed_session
from bench.harness import arguments, database, forget_kept, in_process, median, ms, service_app
from bench.overhead import CHAT_BODY

CPYTHON_THRESHOLDS = (700, 10, 10)
FREQUENT_THRESHOLDS = (10_000, 50, 100)
SETTINGS = (
    "the service's",
    "the service's, collector off during the request",
    "young objects every 10,000 allocations",
    "CPython's",
)


def use(setting: str) -> None:
    if setting == "CPython's":
        gc.unfreeze()
        gc.set_threshold(*CPYTHON_THRESHOLDS)
    else:
        gc.freeze()
        gc.set_threshold(*(FREQUENT_THRESHOLDS if setting == SETTINGS[2] else GC_THRESHOLDS))


async def main(database_url: str | None, count: int, repeat: int, sessions: int) -> None:
    async with database(database_url) as url:
        await seed_session(url, "s10k", count)
        app = service_app(url)
        async with in_process(app) as http:

            async def projection() -> httpx.Response:
                return await http.get("/sessions/s10k/projection", params={"view": "model"})

            async def chat() -> httpx.Response:
                forget_kept(app)
                return await http.post("/chat", json=CHAT_BODY)

            actions: dict[str, Callable[[], Awaitable[httpx.Response]]] = {"model projection": projection}
            actions["POST /chat anthropic, cold"] = chat
            timings: dict[tuple[str, str], list[float]] = {}
            collections: dict[tuple[str, str], list[int]] = {}
            for round_ in range(repeat + 1):
                shift = round_ % len(SETTINGS)
                for setting in SETTINGS[shift:] + SETTINGS[:shift]:
                    use(setting)
                    for name, action in actions.items():
                        before = sum(generation["collections"] for generation in gc.get_stats())
                        paused = setting == SETTINGS[1]
                        if paused:
                            gc.disable()
                        started = time.perf_counter()
                        (await action()).raise_for_status()
                        took = time.perf_counter() - started
                        gc.enable()
                        ran = sum(generation["collections"] for generation in gc.get_stats()) - before
                        if round_ >= 1:
                            timings.setdefault((name, setting), []).append(took)
                            collections.setdefault((name, setting), []).append(ran)
            use(SETTINGS[0])
            spread = await across_sessions(http, url, count, sessions, rounds=max(2, repeat // 4))
    for name in actions:
        service = median(timings[name, SETTINGS[0]])
        for setting in SETTINGS:
            took = median(timings[name, setting])
            ran = median(collections[name, setting])
            print(f"{name}, {setting}: {ms(took)} ({ran:.0f} collections), {took / service:.2f}x")
    for setting, (middle, mean, collector, runs) in spread.items():
        print(
            f"cold POST /chat across {sessions} sessions, {setting}: median {ms(middle)}, mean {ms(mean)};"
            f" collector {ms(collector)} a request in {runs:.1f} collections"
        )


async def across_sessions(
    http: httpx.AsyncClient, url: str, count: int, sessions: int, *, rounds: int
) -> dict[str, tuple[float, float, float, float]]:
    """Cold ``/chat`` requests on ``sessions`` sessions of ``count`` messages, one after another, with the
    windows and turns they keep left in place: more than the default reuse memory holds, so each request
    finds its session's window evicted, keeps its own and evicts another's, as a process serving many long
    sessions does. Per setting (CPython's, the earlier one and the service's, in a rotating order): the
    median and mean request, and the collector's time and collections a request."""
    for n in range(sessions):
        await seed_session(url, f"many{n}", count)
    compared = (SETTINGS[0], SETTINGS[2], SETTINGS[3])
    took: dict[str, list[float]] = {setting: [] for setting in compared}
    clocks = {setting: CollectorClock() for setting in compared}
    for round_ in range(rounds):
        shift = round_ % len(compared)
        for setting in compared[shift:] + compared[:shift]:
            use(setting)
            gc.callbacks.append(clocks[setting])
            for n in range(sessions):
                started = time.perf_counter()
                (await http.post("/chat", json={**CHAT_BODY, "sessionId": f"many{n}"})).raise_for_status()
                took[setting].append(time.perf_counter() - started)
            gc.callbacks.remove(clocks[setting])
    use(SETTINGS[0])
    requests = rounds * sessions
    return {
        setting: (
            median(took[setting]),
            sum(took[setting]) / requests,
            clocks[setting].seconds / requests,
            clocks[setting].runs / requests,
        )
        for setting in compared
    }


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=12)
    parser.add_argument("--sessions", type=int, default=16, help="sessions the cold requests take turns on")
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat, options.sessions))
