"""Synthetic agent sessions written straight to the database with COPY: 100,000 messages in seconds.

A session repeats one agent turn: a user request, three tool calls each answered by a tool result (text of a
chosen size), and an assistant answer. Kinds and token estimates are computed with the service's own
``infer_kind`` and ``estimate_tokens``, so the rows are exactly what the append endpoint would store. A
compaction (boundary plus linked summary) can be placed so that a given number of messages follow it.
Never used by the service or the tests.
"""

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from app.engine.promotion import infer_kind
from app.engine.tokens import estimate_tokens
from bench.harness import TENANT, raw_connection

COLUMNS = (
    "tenant_id",
    "session_id",
    "seq",
    "id",
    "run_id",
    "role",
    "kind",
    "content",
    "metadata",
    "token_estimate",
    "created_at",
)
TURN = 8
"""Messages per agent turn: user, (call, result) x 3, answer."""
START = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = ("the", "build", "failed", "because", "a", "fixture", "reads", "stale", "config", "from", "previous", "run")


def _filler(rng: random.Random, size: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(size // 5 + 1))[:size]


class Text:
    """Slices of one long text: making 100,000 tool outputs must not cost more than storing them."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self._rng = rng
        self._pool = _filler(rng, 1 << 20)

    def take(self, low: int, high: int) -> str:
        size = self._rng.randint(low, high)
        start = self._rng.randrange(0, len(self._pool) - size)
        return self._pool[start : start + size]


def turn_message(position: int, text: Text, result_bytes: tuple[int, int]) -> tuple[str, Any, dict[str, Any]]:
    """The (role, content, metadata) of the message at ``position`` (0-based) of a session."""
    step = position % TURN
    turn = position // TURN
    if step == 0:
        return "user", f"Turn {turn}: {text.take(40, 200)}", {}
    if step == TURN - 1:
        return "assistant", [{"type": "text", "text": text.take(100, 600)}], {"finishReason": "stop"}
    call_id = f"call_{turn}_{(step - 1) // 2}"
    if step % 2 == 1:
        arguments = {"path": f"src/{turn}.py"}
        part = {"type": "tool-call", "toolCallId": call_id, "toolName": "read_file", "input": arguments}
        return "assistant", [part], {"finishReason": "tool-calls"}
    output = {"type": "text", "value": text.take(*result_bytes)}
    return "tool", [{"type": "tool-result", "toolCallId": call_id, "toolName": "read_file", "output": output}], {}


def session_messages(
    session_id: str,
    count: int,
    *,
    compaction_before_last: int | None = None,
    result_bytes: tuple[int, int] = (2048, 8192),
    seed: int = 7,
) -> Iterator[tuple[int, str, str, Any, dict[str, Any]]]:
    """``count`` messages as (seq, id, role, content, metadata); with ``compaction_before_last`` a boundary
    and its summary are the two messages right before the last ``compaction_before_last`` ones (older ones
    every 10,000 too)."""
    text = Text(seed)
    compactions: set[int] = set()
    if compaction_before_last is not None:
        newest = count - compaction_before_last - 2
        compactions = {newest, *range(newest - 10_000, 0, -10_000)}
    position = 0
    seq = 0
    while seq < count:
        if seq in compactions and seq + 2 <= count:
            boundary_id = f"{session_id}-b{seq}"
            for role, content, metadata, message_id in (
                ("system", "compacted", {"runtimeKind": "compact_boundary"}, boundary_id),
                (
                    "system",
                    f"Summary of the first {seq} messages: {text.take(400, 800)}",
                    {"runtimeKind": "compact_summary", "summaryForBoundaryId": boundary_id},
                    f"{session_id}-s{seq}",
                ),
            ):
                seq += 1
                yield seq, message_id, role, content, metadata
            continue
        role, content, metadata = turn_message(position, text, result_bytes)
        position += 1
        seq += 1
        yield seq, f"{session_id}-m{seq}", role, content, metadata


def session_rows(session_id: str, count: int, **options: Any) -> Iterator[tuple[Any, ...]]:
    """``session_messages`` as rows of ``COLUMNS``, for COPY."""
    for seq, message_id, role, content, metadata in session_messages(session_id, count, **options):
        yield _row(session_id, seq, message_id, role, content, metadata)


def _row(
    session_id: str, seq: int, message_id: str, role: str, content: Any, metadata: dict[str, Any]
) -> tuple[Any, ...]:
    kind = _kind(role, content, metadata)
    created = START + timedelta(seconds=seq)
    tokens = estimate_tokens(content)
    return (TENANT, session_id, seq, message_id, None, role, kind, content, metadata, tokens, created)


def _kind(role: str, content: Any, metadata: dict[str, Any]) -> str:
    # The kind depends on the role, the part types and runtimeKind only: one inference per shape.
    types = tuple(part["type"] for part in content) if isinstance(content, list) else ()
    return _kind_of_shape(role, types, metadata.get("runtimeKind"), content, metadata)


_KINDS: dict[tuple[Any, ...], str] = {}


def _kind_of_shape(role: str, types: tuple[str, ...], runtime_kind: Any, content: Any, metadata: dict[str, Any]) -> str:
    key = (role, types, runtime_kind)
    if key not in _KINDS:
        kind, _ = infer_kind(role, content, metadata)  # type: ignore[arg-type]
        _KINDS[key] = str(kind)
    return _KINDS[key]


async def write_session(connection: asyncpg.Connection, session_id: str, count: int, **options: Any) -> None:
    """Creates ``session_id`` with ``count`` messages in one transaction (COPY in chunks of 20,000), its
    live-history start on the session row as an append would keep it, then ANALYZE: a session loaded
    behind the service's back, with fresh statistics (``bench.window_cost`` builds its own through the API)."""
    newest: tuple[int, int] | None = None
    async with connection.transaction():
        await connection.execute(
            "INSERT INTO sessions (tenant_id, id, title, last_seq, revision) VALUES ($1, $2, $3, $4, 1)",
            TENANT,
            session_id,
            f"bench {count}",
            count,
        )
        chunk: list[tuple[Any, ...]] = []
        for row in session_rows(session_id, count, **options):
            chunk.append(row)
            if row[6] == "compact_summary":
                # The dataset's summaries are never blank and directly follow their boundary.
                newest = (row[2] - 1, row[2])
            if len(chunk) == 20_000:
                await connection.copy_records_to_table("messages", records=chunk, columns=COLUMNS)
                chunk = []
        if chunk:
            await connection.copy_records_to_table("messages", records=chunk, columns=COLUMNS)
        if newest is not None:
            await connection.execute(
                "UPDATE sessions SET compaction_boundary_seq = $3, compaction_summary_seq = $4,"
                " live_history_start_seq = $3 WHERE tenant_id = $1 AND id = $2",
                TENANT,
                session_id,
                *newest,
            )
    await connection.execute("ANALYZE messages")


async def seed_session(url: str, session_id: str, count: int, **options: Any) -> None:
    """``write_session`` on a connection of its own to ``url``."""
    connection = await raw_connection(url)
    try:
        await write_session(connection, session_id, count, **options)
    finally:
        await connection.close()
