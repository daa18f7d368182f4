"""``EngineMessage``: a persisted message with its meaning made explicit."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.engine.kinds import Kind, Role
from app.engine.persisted import Content


@dataclass(slots=True)
class EngineMessage:
    id: str
    session_id: str
    seq: int
    role: Role
    kind: Kind
    content: Content
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    token_estimate: int = 0
    promotion_note: str | None = None
    """Why a ``runtimeKind`` was ignored, when it was; the debug view shows it."""
    unusual_text: bool = False
    """Content or metadata holds a NUL or an unpaired UTF-16 surrogate (marked at write time)."""
    stored_bytes: int = 0
    """``PersistedMessage.stored_bytes``."""
