"""Where each session's live history starts, on its session row: the newest complete compaction's boundary
and summary seqs and the first seq the model view reads. Sessions holding a summary are back-filled with the
same search the service runs when a compaction is written (``app.store.live_start``).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import orjson
import sqlalchemy as sa
from alembic import op

from app import lossless_json
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote_all
from app.store.escaped_text import unescape_strings
from app.store.live_start import MARKER_KINDS, live_start, named_through_ids

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("compaction_boundary_seq", "compaction_summary_seq", "live_history_start_seq")

_COMPACTED = sa.text(
    "SELECT DISTINCT tenant_id, session_id FROM messages WHERE kind = :kind ORDER BY tenant_id, session_id"
).bindparams(kind=str(Kind.COMPACT_SUMMARY))
_MESSAGE = (
    "SELECT id, session_id, seq, role, content::text AS content, created_at, metadata::text AS metadata, run_id,"
    " token_estimate, unusual_text FROM messages WHERE tenant_id = :tenant AND session_id = :session"
)
_MARKERS_SQL = _MESSAGE + " AND kind IN :kinds ORDER BY seq"
_NAMED_SQL = _MESSAGE + " AND id IN :ids"
_MARKERS = sa.text(_MARKERS_SQL).bindparams(sa.bindparam("kinds", [str(kind) for kind in MARKER_KINDS], expanding=True))
_NAMED = sa.text(_NAMED_SQL).bindparams(sa.bindparam("ids", expanding=True))
_WRITE = sa.text(
    "UPDATE sessions SET compaction_boundary_seq = :boundary, compaction_summary_seq = :summary,"
    " live_history_start_seq = :start WHERE tenant_id = :tenant AND id = :session"
)


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column("sessions", sa.Column(name, sa.BigInteger(), nullable=True))
    connection = op.get_bind()
    for tenant, session in connection.execute(_COMPACTED).all():
        scope = {"tenant": tenant, "session": session}
        markers = _promoted(connection.execute(_MARKERS, scope).all())
        named = named_through_ids(markers)
        through = _promoted(connection.execute(_NAMED, {**scope, "ids": named}).all()) if named else []
        found = live_start(markers, through)
        if found is not None:
            seqs = {"boundary": found.boundary_seq, "summary": found.summary_seq, "start": found.start_seq}
            connection.execute(_WRITE, {**scope, **seqs})


def _promoted(rows: Sequence[sa.Row[tuple[object, ...]]]) -> list[EngineMessage]:
    return promote_all(
        PersistedMessage(
            id=row.id,
            session_id=row.session_id,
            seq=row.seq,
            role=row.role,
            content=lossless_json.loads(row.content),
            created_at=row.created_at,
            metadata=_metadata(row.metadata, unusual=row.unusual_text),
            run_id=row.run_id,
            token_estimate=row.token_estimate,
            unusual_text=row.unusual_text,
        )
        for row in rows
    )


def _metadata(text: str, *, unusual: bool) -> dict[str, object]:
    metadata: dict[str, object] = orjson.loads(text)
    return unescape_strings(metadata) if unusual else metadata


def downgrade() -> None:
    for name in reversed(COLUMNS):
        op.drop_column("sessions", name)
