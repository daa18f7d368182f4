"""A small OpenAI-compatible model server on a loopback port, for tests over real HTTP.

It serves ``GET /v1/models`` (vLLM-shaped, with ``max_model_len``) and ``POST /v1/chat/completions``, records
every request, and can be told to answer slowly (hold the answer until released or stopped), with garbage,
with an error status, with any body or with one made from the request. It runs in its own thread, so async
tests drive it with a real ``httpx`` client and no mocks. Use it as a context manager or with ``start``/``stop``:

    with FakeModelServer(models={"qwen": 32_768}) as server:
        server.answer_chat("## Goal\\n...")
        ...  # point a client at server.base_url
"""

import json
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

MODELS_PATH = "/v1/models"
CHAT_PATH = "/v1/chat/completions"
HANG_LIMIT_SECONDS = 10.0
"""A held answer is released at the latest after this, so a forgotten ``release`` never hangs a test run."""


@dataclass(frozen=True)
class Reply:
    status: int = 200
    json: Any = None
    body: bytes | None = None
    """Raw bytes, sent instead of ``json`` (for garbage)."""
    content_type: str = "application/json"
    hang: bool = False
    """Hold the answer until ``release``/``stop``: a server too slow for any client timeout."""

    def payload(self) -> bytes:
        if self.body is not None:
            return self.body
        return json.dumps(self.json).encode()


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def models_listing(models: Mapping[str, int | None]) -> dict[str, Any]:
    """A ``/v1/models`` body as vLLM writes it; a ``None`` window leaves ``max_model_len`` out."""
    data = []
    for model_id, window in models.items():
        entry: dict[str, Any] = {"id": model_id, "object": "model", "owned_by": "vllm", "root": model_id}
        if window is not None:
            entry["max_model_len"] = window
        data.append(entry)
    return {"object": "list", "data": data}


def chat_completion(
    text: str | None, *, model: str = "summarizer", finish_reason: str | None = "stop"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def unused_base_url() -> str:
    """A loopback URL where nothing listens: connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@dataclass
class FakeModelServer:
    models: Mapping[str, int | None] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    _replies: dict[str, Reply | Callable[[RecordedRequest], Reply]] = field(default_factory=dict)
    _release: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.serve_models(self.models)
        self.answer_chat("## Goal\nA summary.")

    # Lifecycle ------------------------------------------------------------------------------------------

    def start(self) -> Self:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._release.clear()
        # A short poll interval makes ``stop`` quick: shutdown waits for the serving loop's next poll.
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.01,), name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=HANG_LIMIT_SECONDS)
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake model server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # Answers -------------------------------------------------------------------------------------------

    def reply(self, path: str, reply: Reply) -> None:
        with self._lock:
            self._replies[path] = reply

    def reply_with(self, path: str, make: Callable[[RecordedRequest], Reply]) -> None:
        """Answer each request with what ``make`` makes of it (say, a summary as long as its ``max_tokens``)."""
        with self._lock:
            self._replies[path] = make

    def serve_models(self, models: Mapping[str, int | None]) -> None:
        self.models = dict(models)
        self.reply(MODELS_PATH, Reply(json=models_listing(self.models)))

    def answer_chat(self, text: str | None, *, finish_reason: str | None = "stop") -> None:
        self.reply(CHAT_PATH, Reply(json=chat_completion(text, finish_reason=finish_reason)))

    def hang(self, path: str) -> None:
        self.reply(path, Reply(hang=True, json={}))

    def garbage(self, path: str) -> None:
        self.reply(path, Reply(body=b"<html>not json at all", content_type="text/html"))

    def fail(self, path: str, status: int = 500) -> None:
        self.reply(path, Reply(status=status, json={"error": {"message": "boom"}}))

    def release(self) -> None:
        """Let held answers go (they are answered, to whoever still listens)."""
        self._release.set()

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [request for request in self.requests if request.path == path]

    # Called from the server's threads -------------------------------------------------------------------

    def _answer(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        request = RecordedRequest(method, path, dict(headers), body)
        with self._lock:
            self.requests.append(request)
            reply = self._replies.get(path)
        if callable(reply):
            reply = reply(request)
        if reply is None:
            return Reply(status=404, json={"error": {"message": f"no route {path}"}})
        if reply.hang:
            self._release.wait(HANG_LIMIT_SECONDS)
        return reply


def _handler_for(fake: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            reply = fake._answer(method, path, {k.lower(): v for k, v in self.headers.items()}, body)
            payload = reply.payload()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (its timeout fired): exactly what a slow-server test provokes.
                return

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
