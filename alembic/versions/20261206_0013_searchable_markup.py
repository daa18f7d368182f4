"""Markup-like text becomes searchable: PostgreSQL's search parser drops what it takes for HTML tags (and a
whole ``<script>`` element with what follows it), so every ``<`` of the stored search text gets a zero-width
space after it, as new messages' text does (``app.engine.search_text.searchable``). The generated search
vector follows. Rewrites only the messages whose text holds a ``<`` without one, so it may run beforehand,
in batches (docs/upgrading.md), and again.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "UPDATE messages SET search_text = regexp_replace(search_text, '<(?!\u200b)', '<\u200b', 'g') "
        "WHERE search_text ~ '<(?!\u200b)'"
    )


def downgrade() -> None:
    op.execute("UPDATE messages SET search_text = replace(search_text, '<\u200b', '<') WHERE search_text ~ '<\u200b'")
