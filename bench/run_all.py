"""Runs the six benchmarks against one PostgreSQL and prompt caching (pure, no database), and prints every
figure, then the verdicts; then the agent loop, which reports figures without a target.

``.venv/bin/python -m bench.run_all`` starts one embedded PostgreSQL in a temporary folder (deleted at the
end) unless ``--database-url`` names a server; each benchmark creates and drops its own database on it. The
agent loop makes a streaming pair of its own from the embedded PostgreSQL's binaries, to run once with reads on
the primary and once on the replica; given ``--database-url`` it runs there, on the primary alone.
"""

import asyncio
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from app.store.embedded import EmbeddedPostgres
from bench import agent_loop, appends, caching, memory, overhead, probes, throughput, window_cost
from bench.harness import arguments


async def run(server_url: str, given_url: str | None) -> list[str]:
    verdicts: list[str] = []
    steps: tuple[tuple[str, Callable[[], Awaitable[list[str]]]], ...] = (
        ("1. model view: window, not history", lambda: window_cost.main(server_url, 100_000, 30)),
        ("2. overhead over the asyncpg + orjson floor", lambda: overhead.main(server_url, 10_000, 10)),
        ("3. throughput, 16 clients, ETag revalidation", lambda: throughput.main(server_url, 16, 160, 2_000)),
        ("4. appends and isolation between sessions", lambda: appends.main(server_url, 5, 100)),
        ("5. memory while paging long sessions", lambda: memory.main(server_url, [10_000, 20_000, 40_000])),
        ("6. the outside probe's cases: /healthz during large requests", lambda: probes.main(server_url)),
        ("7. prompt caching over a 200-turn agent session", lambda: asyncio.to_thread(caching.main, 200)),
        (
            "the agent loop: 50 sessions, /chat on windows of about 150k tokens, two workers",
            lambda: agent_loop.main(given_url, None, 50, 6, 150_000, 2),
        ),
    )
    for title, step in steps:
        print(f"\n== {title}", flush=True)
        started = time.perf_counter()
        verdicts += await step()
        print(f"   ({time.perf_counter() - started:.0f} s)", flush=True)
    return verdicts


def main() -> None:
    options = arguments(__doc__ or "").parse_args()
    embedded: EmbeddedPostgres | None = None
    folder = Path(tempfile.mkdtemp(prefix="projector-bench-"))
    server_url = options.database_url
    if server_url is None:
        embedded = EmbeddedPostgres(folder, delete_on_stop=True)
        server_url = embedded.url("postgres")
    try:
        verdicts = asyncio.run(run(server_url, options.database_url))
    finally:
        if embedded is not None:
            embedded.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print("\n== verdicts")
    for line in verdicts:
        print(line)


if __name__ == "__main__":
    main()
