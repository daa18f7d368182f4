"""Where a cold ``POST /chat`` spends its CPU: a load for a sampling profiler, and the profile read back by stage.

Runs cold ``POST /chat`` requests (anthropic, nothing kept from an earlier request) on the 10,000-message
session of ``bench.overhead``, through the real ASGI app in one process, and prints each request's median
time and what the cycle collector ran during it (collections and their time, from ``gc.callbacks``). Under
py-spy it is the load to profile; ``--shares`` reads the raw profile back and says what share of the
request's samples each stage took, a stage being the first of ``STAGES`` found in a sample's stack:

    py-spy record -r 500 -f raw -o cold.txt -- python -m bench.cold_chat --requests 150
    python -m bench.cold_chat --shares cold.txt

A diagnostic, not a target: shares are of samples, and a profiler slows Python code more than C code.
"""

import asyncio
import gc
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.dataset import seed_session
from bench.harness import arguments, database, forget_kept, in_process, median, ms, service_app
from bench.overhead import CHAT_BODY

STAGES = (
    ("encoding the answer", "encode_json (app/api/responses.py"),
    ("keeping the turn for the next request", "cut_turn"),
    ("context count", "count_turn"),
    ("prefix measure", "measure_prefix"),
    ("model view", "project_model"),
    ("serializer", "to_chat_messages"),
    ("settle", "settle_in_passes"),
    ("anthropic adapter", "to_anthropic"),
    ("the rest of the build", "_build (app/services/chat.py"),
    ("promotion", "promote_rows"),
    ("rows read: JSON decoding", "loads (app/lossless_json.py"),
    ("rows read: asyncpg's protocol", "_read_ready__data_received"),
    ("the rest of the session read", "load_snapshot_with"),
    ("the rest of the request (HTTP client, routing, middleware, ASGI)", "AsyncClient.post"),
)
"""Each stage's name and a frame (``function (file``) that marks a sample as its own; the first found wins, so
a stage nested in another comes before it."""


def shares(raw_profile: Path) -> list[tuple[str, float]]:
    """Each stage's share of the samples that fall in one, largest first, from py-spy's ``--format raw``
    (one stack a line, frames joined by ``;``, then the sample count)."""
    counts: Counter[str] = Counter()
    for line in raw_profile.read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        stage = next((name for name, frame in STAGES if frame in stack), None)
        if stage is not None:
            counts[stage] += int(samples)
    total = sum(counts.values())
    return [(name, count / total) for name, count in counts.most_common()]


class CollectorClock:
    """The cycle collector's runs and their time, from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.runs = 0
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.runs += 1
            self.seconds += time.perf_counter() - self._started


async def main(database_url: str | None, count: int, requests: int) -> None:
    async with database(database_url) as url:
        await seed_session(url, "s10k", count)
        app = service_app(url)
        clock = CollectorClock()
        took: list[float] = []
        runs: list[float] = []
        spent: list[float] = []
        async with in_process(app) as http:
            gc.callbacks.append(clock)
            for _ in range(requests):
                forget_kept(app)
                clock.runs, clock.seconds = 0, 0.0
                started = time.perf_counter()
                (await http.post("/chat", json=CHAT_BODY)).raise_for_status()
                took.append(time.perf_counter() - started)
                runs.append(clock.runs)
                spent.append(clock.seconds)
            gc.callbacks.remove(clock)
    print(f"cold POST /chat, {count:,} messages, {requests} requests: median {ms(median(took))}")
    print(f"cycle collector per request: {median(runs):.0f} collections, {ms(median(spent))}")


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--shares", type=Path, help="read this py-spy raw profile instead of running requests")
    options = parser.parse_args()
    if options.shares is not None:
        for name, share in shares(options.shares):
            print(f"{share:6.1%}  {name}")
    else:
        asyncio.run(main(options.database_url, options.messages, options.requests))
