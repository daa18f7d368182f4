"""Message search and analytics facts: the searchable text and its tsvector (GIN-indexed), and the tool names
of each message's calls, results and failed results; existing messages are back-filled.

The facts are worked out in Python from the stored parts (``app.engine.search_text``), exactly as new
messages get them at write time, and never in SQL from the content column. Back-filled rows use the search
configuration the service is set to (``PROJECTOR_SEARCH_CONFIG``, default ``simple``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import orjson
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, REGCONFIG, TSVECTOR

from app.engine.kinds import Kind
from app.engine.search_text import message_facts
from app.settings import get_settings

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BACKFILL_BATCH = 1_000

_READ = sa.text(
    "SELECT tenant_id, session_id, seq, kind, content::text AS content, metadata::text AS metadata FROM messages"
    " WHERE (tenant_id, session_id, seq) > (:tenant, :session, :seq)"
    " ORDER BY tenant_id, session_id, seq LIMIT :limit"
)
_WRITE = sa.text(
    "UPDATE messages SET search_config = CAST(:config AS regconfig), search_text = :text,"
    " tool_calls = :calls, tool_results = :results, tool_errors = :errors"
    " WHERE tenant_id = :tenant AND session_id = :session AND seq = :seq"
).bindparams(
    sa.bindparam("calls", type_=ARRAY(sa.Text)),
    sa.bindparam("results", type_=ARRAY(sa.Text)),
    sa.bindparam("errors", type_=ARRAY(sa.Text)),
)


def upgrade() -> None:
    empty_list = sa.text("'{}'::text[]")
    op.add_column(
        "messages",
        sa.Column("search_config", REGCONFIG, nullable=False, server_default=sa.text("'simple'::regconfig")),
    )
    op.add_column("messages", sa.Column("search_text", sa.Text(), nullable=False, server_default=sa.text("''")))
    op.add_column(
        "messages",
        sa.Column("search_vector", TSVECTOR, sa.Computed("to_tsvector(search_config, search_text)", persisted=True)),
    )
    for name in ("tool_calls", "tool_results", "tool_errors"):
        op.add_column("messages", sa.Column(name, ARRAY(sa.Text), nullable=False, server_default=empty_list))
    _backfill(op.get_bind(), get_settings().search_config)
    op.create_index("ix_messages_search_vector", "messages", ["search_vector"], postgresql_using="gin")


def _backfill(connection: sa.Connection, config: str) -> None:
    """Every stored message, a batch at a time in key order, so a long history never sits in memory."""
    after: dict[str, object] = {"tenant": "", "session": "", "seq": 0}
    while True:
        rows = connection.execute(_READ, {**after, "limit": BACKFILL_BATCH}).all()
        if not rows:
            return
        updates = []
        for row in rows:
            facts = message_facts(Kind(row.kind), orjson.loads(row.content), orjson.loads(row.metadata))
            updates.append(
                {
                    "tenant": row.tenant_id,
                    "session": row.session_id,
                    "seq": row.seq,
                    "config": config,
                    "text": facts.search_text,
                    "calls": list(facts.tool_calls),
                    "results": list(facts.tool_results),
                    "errors": list(facts.tool_errors),
                }
            )
        connection.execute(_WRITE, updates)
        last = rows[-1]
        after = {"tenant": last.tenant_id, "session": last.session_id, "seq": last.seq}


def downgrade() -> None:
    op.drop_index("ix_messages_search_vector", table_name="messages")
    for name in ("tool_errors", "tool_results", "tool_calls", "search_vector", "search_text", "search_config"):
        op.drop_column("messages", name)
