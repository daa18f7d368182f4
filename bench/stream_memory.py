"""What one caller's streams that read nothing make the server hold, at each ``PROJECTOR_STREAMS_PER_CALLER``.

Sessions of four 15 MB messages are written through the API; then ``--streams`` clients of one caller (one
address, auth off) each open ``GET /sessions/{id}/events?after=0`` and read nothing past the status line, so
each stream catches up until its socket is full and then holds its page. The server's RSS is read once it
settles with every client connected, and again after they all hang up. Each limit runs on a fresh uvicorn
worker; a limit as large as ``--streams`` is the service without one. Not a timed target: the figures are in
docs/performance.md ("A caller's open streams").
"""

import asyncio
import time

import httpx
import psutil  # type: ignore[import-untyped]

from bench.harness import arguments, database, serve

MIB = 1024 * 1024
MESSAGE_BYTES = 15 * 1000 * 1000
MESSAGES_PER_SESSION = 4


async def write_sessions(base_url: str, sessions: int) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as http:
        for number in range(sessions):
            (await http.post("/sessions", json={"id": f"large{number}"})).raise_for_status()
            for index in range(MESSAGES_PER_SESSION):
                text = chr(ord("a") + index) * MESSAGE_BYTES
                message = {"id": f"m{index}", "role": "tool", "content": [tool_result(index, text)]}
                answer = await http.post(f"/sessions/large{number}/messages", json={"messages": [message]})
                answer.raise_for_status()


def tool_result(index: int, text: str) -> dict[str, object]:
    output = {"type": "text", "value": text}
    return {"type": "tool-result", "toolCallId": f"call_{index}", "toolName": "read_file", "output": output}


async def open_silent(port: int, path: str) -> tuple[asyncio.StreamWriter, int]:
    """A client that asks for ``path`` and reads only its status line; the status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    status_line = await reader.readline()
    return writer, int(status_line.split()[1])


async def settled_rss(process: psutil.Process, *, seconds: float = 20.0) -> int:
    """RSS once it has not moved by more than a MiB for a second (or after ``seconds``)."""
    deadline = time.monotonic() + seconds
    last = process.memory_info().rss
    while time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        now = process.memory_info().rss
        if abs(now - last) < MIB:
            return int(now)
        last = now
    return int(last)


async def measure(url: str, limit: int, streams: int, sessions: int) -> str:
    async with serve(url, streams_per_caller=str(limit)) as server:
        worker = psutil.Process(server.pid)
        port = int(server.base_url.rsplit(":", 1)[1])
        idle = await settled_rss(worker)
        opened = [
            await open_silent(port, f"/sessions/large{number % sessions}/events?after=0") for number in range(streams)
        ]
        held = await settled_rss(worker)
        refused = sum(status == 429 for _, status in opened)
        for writer, _ in opened:
            writer.close()
        after = await settled_rss(worker)
        return (
            f"limit {limit:>4}: {streams - refused} streams open, {refused} refused (429); server RSS idle"
            f" {idle / MIB:,.0f} MiB, held {held / MIB:,.0f} MiB, after they left {after / MIB:,.0f} MiB"
        )


async def main(database_url: str | None, limits: list[int], streams: int, sessions: int) -> None:
    async with database(database_url) as url:
        async with serve(url) as server:
            started = time.perf_counter()
            await write_sessions(server.base_url, sessions)
            print(
                f"{sessions} sessions of {MESSAGES_PER_SESSION} x {MESSAGE_BYTES / 1e6:.0f} MB messages written"
                f" in {time.perf_counter() - started:.1f} s; {streams} silent event streams of one caller",
                flush=True,
            )
        for limit in limits:
            print(await measure(url, limit, streams, sessions), flush=True)


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--limits", type=int, nargs="+", default=[1000, 16], help="PROJECTOR_STREAMS_PER_CALLER")
    parser.add_argument("--streams", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.limits, options.streams, options.sessions))
