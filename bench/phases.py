"""Where a large ``POST /chat`` spends its time: each stage of the pipeline timed on its own.

On the 10,000-message session of ``bench.overhead``, times the floor's fetch alone, the session read the
route makes (``load_snapshot``: snapshot, fetch, promotion), then each synchronous stage on that
window, called as the route calls it: the model view, the serializer, ``settle``, the Anthropic adapter,
measuring the prompt-cache prefix (each unit serialized and hashed once), the context accounting (of the
model view already built, as the route counts it) and the response encoding; and the whole request
through the ASGI app, cold (no window or turn kept). Apart, the accounting as ``GET /sessions/{id}/context``
runs it, building the model view it counts. What the request costs beyond the sum of its stages is freeing
what it built, keeping a turn for the next request and HTTP handling. A diagnostic for target 2, not a
target: medians, the stages interleaved so they see the same machine. A stage's time leaves out the cycle
collections it happened to run: one walks every young object, whichever stage crossed the threshold (the
stages keep each other's output alive here, which the route does not all at once), so those on the whole
window are printed apart and those on pieces left out.

Last, the same stages from the model view on run on independent pieces of ``--piece`` messages, one piece
after another, against the same stages on the whole window: not a build the route could send (pieces are not
joined, and a piece built alone may differ from its part of the whole), but what the stages cost when each
piece's objects are still in the processor's cache for the next stage.
"""

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

import orjson

from app.context.accounting import account_context
from app.context.window import ContextWindow
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from app.providers.anthropic import to_anthropic
from app.providers.caching import answered_tail, measure_prefix, stable_units
from app.providers.conversation import settle
from app.providers.serializer import to_chat_messages
from app.services.context_config import threshold_policy
from app.services.snapshots import load_snapshot
from app.settings import Settings
from bench.cold_chat import CollectorClock
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
)
from bench.overhead import CHAT_BODY, FLOOR_SQL

MODEL = CHAT_BODY["model"]


COLLECTOR = "the cycle collector, in the stages on the whole window"


def timed(
    figures: dict[str, float], name: str, clock: CollectorClock, action: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    """One call under the service's collector settings (set when the app started), its time in ``figures``
    without the collections it happened to run, which go to ``COLLECTOR``: a collection walks every young
    object, whichever stage crossed the threshold, so charging it to that stage would mislead."""
    collected = clock.seconds
    started = time.perf_counter()
    result = action(*args, **kwargs)
    collected = clock.seconds - collected
    figures[name] = time.perf_counter() - started - collected
    figures[COLLECTOR] = figures.get(COLLECTOR, 0.0) + collected
    return result


def stages(messages: list[Any], ctx: ProjectionContext, settings: Settings, clock: CollectorClock) -> dict[str, float]:
    """Each synchronous stage of the route on one loaded window, in the route's order."""
    figures: dict[str, float] = {}
    projection = timed(figures, "model view", clock, project, View.MODEL, messages, ctx)
    chat, _ = timed(figures, "serializer", clock, to_chat_messages, projection.messages)
    settled, _ = timed(figures, "settle", clock, settle, chat)
    payload, _ = timed(
        figures, "anthropic adapter", clock, to_anthropic, settled, model=MODEL, tools=(), max_output_tokens=None
    )
    stable = stable_units("anthropic", payload, answered=answered_tail(settled.messages))
    timed(figures, "measuring the cache prefix", clock, measure_prefix, "anthropic", payload, stable)
    window = ContextWindow(200_000, "model_config")
    policy = threshold_policy(settings)
    timed(
        figures,
        "context accounting",
        clock,
        account_context,
        messages,
        window=window,
        policy=policy,
        ctx=ctx,
        view=projection,
    )
    timed(figures, "encoding the payload", clock, orjson.dumps, payload)
    accounting = "GET /context's accounting, which builds the model view itself"
    timed(figures, accounting, clock, account_context, messages, window=window, policy=policy, ctx=ctx)
    return figures


PIECES = "the stages from the model view on, on independent pieces of the window (not a correct build)"
WHOLE = "the same stages on the whole window"


def _pure(figure: tuple[str, float]) -> float:
    """A stage's time when it is one of the route's (``GET /context``'s accounting is not)."""
    name, seconds = figure
    return 0.0 if name.startswith("GET") or name == COLLECTOR else seconds


async def main(database_url: str | None, count: int, repeat: int, piece: int) -> None:
    async with database(database_url) as url:
        await seed_session(url, "s10k", count)
        connection = await reading_connection(url)
        app = service_app(url)
        settings: Settings = app.state.settings
        ctx = ProjectionContext(provider=CHAT_BODY["provider"], model=MODEL)
        timings: dict[str, list[float]] = {}
        clock = CollectorClock()
        gc.callbacks.append(clock)
        async with in_process(app) as http:
            for round_ in range(repeat + 2):
                figures: dict[str, float] = {}
                started = time.perf_counter()
                rows = await connection.fetch(FLOOR_SQL, TENANT, "s10k")
                figures["floor: fetch only"] = time.perf_counter() - started
                del rows
                started = time.perf_counter()
                window = await load_snapshot(app.state.database, TENANT, "s10k")
                figures["session read (snapshot, fetch, promotion)"] = time.perf_counter() - started
                on_whole = stages(window.messages, ctx, settings, clock)
                figures |= on_whole
                pieces = [stages(window.messages[n : n + piece], ctx, settings, clock) for n in range(0, count, piece)]
                figures[PIECES] = sum(sum(map(_pure, each.items())) for each in pieces)
                figures[WHOLE] = sum(map(_pure, on_whole.items()))
                del window, pieces
                forget_kept(app)
                started = time.perf_counter()
                response = await http.post("/chat", json=CHAT_BODY)
                figures["POST /chat, the whole request"] = time.perf_counter() - started
                response.raise_for_status()
                if round_ >= 2:
                    for name, seconds in figures.items():
                        timings.setdefault(name, []).append(seconds)
        gc.callbacks.remove(clock)
        await connection.close()
    parts = [
        name
        for name in timings
        if not name.startswith(("floor", "POST", "GET")) and name not in (PIECES, WHOLE, COLLECTOR)
    ]
    for name, values in timings.items():
        print(f"{name}: {ms(median(values))}")
    whole = median(timings["POST /chat, the whole request"])
    print(f"beyond the stages (freeing, HTTP): {ms(whole - sum(median(timings[name]) for name in parts))}")


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--piece", type=int, default=200, help="messages a piece (the pieces' row)")
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat, options.piece))
