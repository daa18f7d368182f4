"""Reading Server-Sent Events the way a client does, and real servers to read them from: uvicorn in a thread of
this process, or ``projector serve`` processes of their own (each with its own LISTEN connection)."""

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.trust.live_server import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    id: str | None
    data: str

    def json(self) -> Any:
        return orjson.loads(self.data)


class EventStream:
    """One open ``GET .../events``: events and comments as they arrive."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.comments: list[str] = []
        self._lines = response.aiter_lines()

    async def next(self, within: float = 10.0) -> Event:
        return await asyncio.wait_for(self._next(), within)

    async def _next(self) -> Event:
        kind, event_id = "", None
        data: list[str] = []
        async for line in self._lines:
            if line == "":
                if data:
                    return Event(kind or "message", event_id, "\n".join(data))
                kind, event_id, data = "", None, []
                continue
            if line.startswith(":"):
                self.comments.append(line[1:].strip())
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                kind = value
            elif field == "id":
                event_id = value
            elif field == "data":
                data.append(value)
        raise EOFError("the stream ended")

    async def messages(self, count: int, within: float = 10.0) -> list[Event]:
        """The next ``count`` message events (other events are skipped)."""
        found: list[Event] = []
        while len(found) < count:
            event = await self.next(within)
            if event.type == "message":
                found.append(event)
        return found

    async def ended(self, within: float = 10.0) -> bool:
        try:
            while True:
                await self.next(within)
        except EOFError:
            return True


@asynccontextmanager
async def open_stream(client: httpx.AsyncClient, session_id: str, **options: Any) -> AsyncIterator[EventStream]:
    """``options``: ``last_event_id``, ``after``, ``headers``."""
    headers = {"accept": "text/event-stream", **options.get("headers", {})}
    if "last_event_id" in options:
        headers["last-event-id"] = str(options["last_event_id"])
    params = {"after": options["after"]} if "after" in options else {}
    async with client.stream("GET", f"/sessions/{session_id}/events", headers=headers, params=params) as response:
        assert response.status_code == 200, (await response.aread()).decode()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield EventStream(response)


@contextmanager
def serve_process(database_url: str, log: Path, **environment: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``projector serve`` in a process of its own over the test database; its base URL and the process."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PROJECTOR_MIGRATE_ON_START": "false",
        "PROJECTOR_LOG_LEVEL": "info",
        **environment,
    }
    env.pop("PROJECTOR_API_KEYS", None)
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(base_url, process, log)
            yield base_url, process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def wait_healthy(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    with httpx.Client(base_url=base_url) as client:
        while time.monotonic() < deadline:
            assert process.poll() is None, f"the server exited while starting:\n{log.read_text()}"
            try:
                if client.get("/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    raise AssertionError("the server did not start")
