"""The outside probe's cases: how long ``/healthz`` takes while one large request runs, against idle.

One uvicorn worker serves; a second client, in a process of its own, asks ``/healthz`` one request after
another while the first sends each probe, and the slowest of those answers is set against the median idle one:

- the probe's batch: 1,000 messages of 2,000 one-letter parts (54 MB, every per-message limit kept), refused
  for its parts before they are validated;
- the largest batch the parts budget lets through: 1,000 messages of 90 parts, validated and stored;
- a redacted export of a page of 24 texts of 1 MB (each full of key-shaped words), built in a worker thread.

Before the large-body work moved off the event loop the probe's batch held it for 9.6 s, so ``/healthz``
waited as long (some 20,000x its idle time). Target: the slowest ``/healthz`` during each probe within 250x
the idle median (about 100 ms): what is left is single calls into C (joining and decoding a body, encoding a
message) that hold the interpreter lock, and the host's other load.
"""

import asyncio
import gc
import multiprocessing
import time
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event as EventType

import httpx
import orjson

from bench.harness import arguments, client, database, median, ms, serve, verdict

PROBE_PARTS = 2_000
PROBE_MESSAGES = 1_000


def batch(messages: int, parts: int) -> bytes:
    one = b'{"role":"user","content":[' + b",".join([b'{"type":"text","text":"a"}'] * parts) + b"]}"
    return b'{"messages":[' + b",".join([one] * messages) + b"]}"


class HealthzSampler:
    """Asks ``/healthz`` one request after another from a process of its own with a blocking client, so what
    it measures is the server: a thread of the benchmark's process shared its interpreter lock, and inside
    ``bench.run_all`` (whose process holds what the earlier benchmarks left) the export's slowest probe
    measured 87-167 ms against 8-27 ms for ``bench.probes`` alone; from a process, 8.9 ms."""

    def __init__(self, base_url: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._receiving, sending = context.Pipe(duplex=False)
        self._process = context.Process(target=_sample, args=(base_url, self._stop, sending), daemon=True)
        self.latencies: list[float] = []

    def __enter__(self) -> "HealthzSampler":
        self._process.start()
        if not self._receiving.poll(60):
            raise RuntimeError("the /healthz sampler did not start")
        self._receiving.recv()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self.latencies = self._receiving.recv()
        self._process.join()


def _sample(base_url: str, stop: EventType, results: Connection) -> None:
    # What the process imported (the service's modules among them) is kept out of its collections, which
    # would otherwise walk it all once, in the middle of the samples (about 65 ms here).
    gc.freeze()
    latencies: list[float] = []
    with httpx.Client(base_url=base_url, timeout=120.0) as http:
        http.get("/healthz").raise_for_status()
        results.send("ready")
        while not stop.is_set():
            asked = time.perf_counter()
            http.get("/healthz").raise_for_status()
            latencies.append(time.perf_counter() - asked)
    results.send(latencies)


async def healthz_while(base_url: str, probe: Callable[[], Awaitable[httpx.Response]]) -> tuple[float, int, float, int]:
    """The slowest ``/healthz`` while ``probe`` runs, how many were answered, the probe's own time and status."""
    with HealthzSampler(base_url) as sampler:
        started = time.perf_counter()
        response = await probe()
        took = time.perf_counter() - started
    return max(sampler.latencies), len(sampler.latencies), took, response.status_code


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
        with HealthzSampler(server.base_url) as sampler:
            await asyncio.sleep(1.0)
        idle = median(sampler.latencies[10:])
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
            slowest, answered, took, status = await healthz_while(server.base_url, send)
            print(
                f"{name}: answered {status} (expected {expected}) in {took:.2f} s;"
                f" /healthz answered {answered} times meanwhile, slowest {ms(slowest)}",
                flush=True,
            )
            verdicts.append(verdict(f"probes: slowest /healthz during {name} / idle", slowest / idle, 250))
    return verdicts


if __name__ == "__main__":
    asyncio.run(main(arguments(__doc__ or "").parse_args().database_url))
