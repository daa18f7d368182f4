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
"""

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable

import httpx

from app.main import GC_THRESHOLDS, create_app
from app.services.window_reuse import WindowReuse
from app.settings import Settings
from bench.dataset import write_session
from bench.harness import arguments, database, in_process, median, ms, raw_connection
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


async def main(database_url: str | None, count: int, repeat: int) -> None:
    async with database(database_url) as url:
        writer = await raw_connection(url)
        await write_session(writer, "s10k", count)
        await writer.close()
        settings = Settings(database_url=None, migrate_on_start=False, log_level="warning")
        app = create_app(settings, database_url=url)
        async with in_process(app) as http:

            async def projection() -> httpx.Response:
                return await http.get("/sessions/s10k/projection", params={"view": "model"})

            async def chat() -> httpx.Response:
                app.state.window_reuse = WindowReuse(settings.chat_reuse_bytes)  # cold: nothing kept
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
    for name in actions:
        service = median(timings[name, SETTINGS[0]])
        for setting in SETTINGS:
            took = median(timings[name, setting])
            ran = median(collections[name, setting])
            print(f"{name}, {setting}: {ms(took)} ({ran:.0f} collections), {took / service:.2f}x")


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=12)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat))
