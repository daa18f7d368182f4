"""Layer 1 as the core sees it: a stored message, exactly as written.

The store builds these from rows, or hands rows holding these fields in this order straight to
``promote_rows`` on its live-history reads; the core never learns where they came from. ``content`` keeps the
AI SDK ModelMessage part shapes (camelCase keys) as stored: a string or a list of part dicts.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.engine.kinds import Role

Content = str | list[dict[str, Any]]


@dataclass(slots=True)
class PersistedMessage:
    id: str
    session_id: str
    seq: int
    role: Role
    content: Content
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    token_estimate: int = 0
    unusual_text: bool = False
    """Marked at write time: content or metadata holds a NUL or an unpaired UTF-16 surrogate, which some
    providers refuse; only such messages are cleaned on their way into a provider payload."""
    stored_bytes: int = 0
    """The stored JSON of content and metadata, in bytes, as the store read it (0 for a message not read from
    it): what the memory a kept window holds is estimated by, without walking its parts."""
