"""Histories as the provider layer receives them, built with the shared domain builders.

``raw`` passes every message on untouched, without the model view's rules: the adapters then see the worst
a caller could hand them (orphans, empties, foreign reasoning, interrupted calls) and must still produce
payloads their providers accept.
"""

from collections.abc import Iterable

from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote
from app.projections.types import ProjectedMessage, View
from tests.builders import history


def raw(*messages: PersistedMessage) -> list[ProjectedMessage]:
    return from_engine(promote(message) for message in history(*messages))


def from_engine(messages: Iterable[EngineMessage]) -> list[ProjectedMessage]:
    return [
        ProjectedMessage(
            view=View.MODEL,
            role=message.role,
            semantic_type=message.kind,
            source_message_ids=(message.id,),
            content=message.content,
            unusual_text=message.unusual_text,
        )
        for message in messages
    ]
