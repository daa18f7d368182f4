"""Facts about a stored message that the page-able views (transcript, debug, export) carry in ``extra``.

Kept in one place so the three views name them alike. Pure; never decides visibility.
"""

from typing import Any

from app.engine.message import EngineMessage


def position(message: EngineMessage) -> dict[str, Any]:
    """Where the message sits in its session: enough for a client to page and link back to it."""
    return {"seq": message.seq, "createdAt": message.created_at.isoformat(), "runId": message.run_id}


def in_order(messages: list[EngineMessage]) -> list[EngineMessage]:
    return sorted(messages, key=lambda m: m.seq)
