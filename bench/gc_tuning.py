"""What the service's cycle-collector tuning (``app.main.tune_garbage_collection``) earns.

On the 10,000-message session of ``bench.overhead``, in one process through the real ASGI app, times
``GET /sessions/{id}/projection?view=model`` and ``POST /chat`` (anthropic) under the service's settings
(start-up objects frozen, thresholds ``app.main.GC_THRESHOLDS``) and under CPython's (nothing frozen,
700, 10, 10), switching between the two every round (each first every other round) so both see the same
machine. Prints the medians, the
collections each request ran and the ratio. A diagnostic, not a target.
"""

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable

import httpx
from asgi_lifespan import LifespanManager

from app.main import GC_THRESHOLDS, create_app
from app.settings import Settings
from bench.dataset import write_session
from bench.harness import arguments, database, median, ms, raw_connection
from bench.overhead import CHAT_BODY

CPYTHON_THRESHOLDS = (700, 10, 10)


def use(tuned: bool) -> None:
    if tuned:
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
    else:
        gc.unfreeze()
        gc.set_threshold(*CPYTHON_THRESHOLDS)


async def main(database_url: str | None, count: int, repeat: int) -> None:
    async with database(database_url) as url:
        writer = await raw_connection(url)
        await write_session(writer, "s10k", count)
        await writer.close()
        app = create_app(Settings(database_url=None, migrate_on_start=False, log_level="warning"), database_url=url)
        async with (
            LifespanManager(app),
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench", timeout=120) as http,
        ):

            async def projection() -> httpx.Response:
                return await http.get("/sessions/s10k/projection", params={"view": "model"})

            async def chat() -> httpx.Response:
                return await http.post("/chat", json=CHAT_BODY)

            actions: dict[str, Callable[[], Awaitable[httpx.Response]]] = {"model projection": projection}
            actions["POST /chat anthropic"] = chat
            timings: dict[tuple[str, bool], list[float]] = {}
            collections: dict[tuple[str, bool], list[int]] = {}
            for round_ in range(repeat + 1):
                # Each setting goes first every other round: the first request after a switch runs slower.
                for tuned in (True, False) if round_ % 2 else (False, True):
                    use(tuned)
                    for name, action in actions.items():
                        before = sum(generation["collections"] for generation in gc.get_stats())
                        started = time.perf_counter()
                        (await action()).raise_for_status()
                        took = time.perf_counter() - started
                        ran = sum(generation["collections"] for generation in gc.get_stats()) - before
                        if round_ >= 1:
                            timings.setdefault((name, tuned), []).append(took)
                            collections.setdefault((name, tuned), []).append(ran)
            use(True)
    for name in actions:
        tuned, default = median(timings[name, True]), median(timings[name, False])
        print(
            f"{name}: {ms(tuned)} tuned ({median(collections[name, True]):.0f} collections) vs {ms(default)} at"
            f" CPython's thresholds ({median(collections[name, False]):.0f} collections): {default / tuned:.2f}x"
        )


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=10)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat))
