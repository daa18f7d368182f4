"""The outside probe's cases: how long ``/healthz`` takes while one large request runs, against idle.

One uvicorn worker serves; a second client asks ``/healthz`` one request after another while the first sends
each probe, and the slowest of those answers is set against the median idle one:

- the probe's batch: 1,000 messages of 2,000 one-letter parts (54 MB, every per-message limit kept), refused
  for its parts before they are validated;
- the largest batch the parts budget lets through: 1,000 messages of 90 parts, validated and stored;
- a redacted export of a page of 24 texts of 1 MB (each full of key-shaped words), built in a worker thread.

Before the large-body work moved off the event loop the probe's batch held it for 9.6 s, so ``/healthz``
waited as long. Target: the slowest ``/healthz`` during each probe within 50x the idle median.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable

import httpx
import orjson

from bench.harness import arguments, client, database, median, ms, samples, serve, verdict

PROBE_PARTS = 2_000
PROBE_MESSAGES = 1_000


def batch(messages: int, parts: int) -> bytes:
    one = b'{"role":"user","content":[' + b",".join([b'{"type":"text","text":"a"}'] * parts) + b"]}"
    return b'{"messages":[' + b",".join([one] * messages) + b"]}"


async def healthz_while(
    http: httpx.AsyncClient, probe: Callable[[], Awaitable[httpx.Response]]
) -> tuple[float, int, float]:
    """The slowest ``/healthz`` while ``probe`` runs, how many were answered, and the probe's own time."""
    task = asyncio.create_task(probe())
    slowest, answered = 0.0, 0
    started = time.perf_counter()
    while not task.done():
        asked = time.perf_counter()
        (await http.get("/healthz")).raise_for_status()
        slowest = max(slowest, time.perf_counter() - asked)
        answered += 1
    response = await task
    return slowest, answered, time.perf_counter() - started, response.status_code


async def main(database_url: str | None) -> list[str]:
    verdicts = []
    async with database(database_url) as url, serve(url) as server, client(server) as http, client(server) as probe:
        json_headers = {"content-type": "application/json"}
        for session in ("probe", "valid", "export"):
            (await http.post("/sessions", json={"id": session})).raise_for_status()
        secret = "key sk-ant-" + "a" * 40 + " mail me@example.com "
        texts = [{"role": "user", "content": secret * (1024 * 1024 // len(secret))} for _ in range(24)]
        (
            await http.post(
                "/sessions/export/messages", content=orjson.dumps({"messages": texts}), headers=json_headers
            )
        ).raise_for_status()
        idle = median(await samples(lambda: http.get("/healthz"), repeat=200, warmup=20))
        print(f"/healthz idle: median {ms(idle)}", flush=True)
        probes: list[tuple[str, Callable[[], Awaitable[httpx.Response]], int]] = [
            (
                "the probe's batch (54 MB, 2,000,000 parts)",
                lambda: probe.post(
                    "/sessions/probe/messages", content=batch(PROBE_MESSAGES, PROBE_PARTS), headers=json_headers
                ),
                413,
            ),
            (
                "a batch at the parts budget (90,000 parts)",
                lambda: probe.post("/sessions/valid/messages", content=batch(1_000, 90), headers=json_headers),
                201,
            ),
            (
                "a redacted export of 24 texts of 1 MB",
                lambda: probe.get("/sessions/export/projection", params={"view": "export", "redact": "true"}),
                200,
            ),
        ]
        for name, send, expected in probes:
            slowest, answered, took, status = await healthz_while(http, send)
            print(
                f"{name}: answered {status} (expected {expected}) in {took:.2f} s;"
                f" /healthz answered {answered} times meanwhile, slowest {ms(slowest)}",
                flush=True,
            )
            verdicts.append(verdict(f"probes: slowest /healthz during {name} / idle", slowest / idle, 50))
    return verdicts


if __name__ == "__main__":
    asyncio.run(main(arguments(__doc__ or "").parse_args().database_url))
