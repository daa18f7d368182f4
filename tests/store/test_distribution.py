"""The schema stays distributable by session (docs/scaling.md): a new table or key that breaks the rule fails
here, read from the table definitions the migrations are checked against.

The rule: a per-session table (``sessions`` itself, or any table with a ``session_id`` column) has every
primary key, unique constraint and unique index lead with ``tenant_id`` and the session's id, and refers to
its session by both; a tenant-wide table (no session) leads every key with ``tenant_id``. Every table is one
or the other: a table scoped by neither could not be placed on a shard at all.
"""

from sqlalchemy import Column, Index, MetaData, PrimaryKeyConstraint, String, Table, Text, UniqueConstraint

from app.store.tables import metadata

SESSION_COLUMN = {"sessions": "id"}
"""The column holding the session's id, where it is not ``session_id``."""
TENANT_TABLES = frozenset({"idempotency_keys"})
"""Tables scoped by tenant only (distributed by tenant, or kept on the coordinator: docs/scaling.md)."""


def session_column(table: Table) -> str | None:
    if table.name in SESSION_COLUMN:
        return SESSION_COLUMN[table.name]
    return "session_id" if "session_id" in table.c else None


def unique_keys(table: Table) -> list[tuple[str, list[str]]]:
    keys = []
    for constraint in table.constraints:
        if isinstance(constraint, PrimaryKeyConstraint | UniqueConstraint) and constraint.columns:
            keys.append((str(constraint.name or type(constraint).__name__), [c.name for c in constraint.columns]))
    for index in table.indexes:
        if isinstance(index, Index) and index.unique:
            keys.append((str(index.name), [c.name for c in index.columns]))
    return keys


def test_every_table_is_scoped_by_session_or_by_tenant() -> None:
    unscoped = [
        name for name, table in metadata.tables.items() if session_column(table) is None and name not in TENANT_TABLES
    ]
    assert unscoped == [], "say in docs/scaling.md how such a table distributes, then list it here"


def test_every_key_of_a_per_session_table_leads_with_tenant_and_session() -> None:
    broken = []
    for table in metadata.tables.values():
        column = session_column(table)
        if column is None:
            continue
        leading = ["tenant_id", column]
        broken += [(table.name, name, columns) for name, columns in unique_keys(table) if columns[:2] != leading]
    assert broken == []


def test_every_key_of_a_tenant_table_leads_with_the_tenant() -> None:
    broken = [
        (name, key, columns)
        for name in TENANT_TABLES
        for key, columns in unique_keys(metadata.tables[name])
        if columns[:1] != ["tenant_id"]
    ]
    assert broken == []


def test_per_session_tables_refer_to_their_session_by_tenant_and_session() -> None:
    broken = []
    for table in metadata.tables.values():
        if session_column(table) is None:
            continue
        for foreign_key in table.foreign_key_constraints:
            local = [column.name for column in foreign_key.columns]
            if local[:2] != ["tenant_id", "session_id"]:
                broken.append((table.name, local))
    assert broken == []


def test_the_rule_catches_a_key_without_the_session() -> None:
    """The check itself: a per-session table keyed by its own id alone is what the rule exists to refuse."""
    table = Table(
        "notes",
        MetaData(),
        Column("tenant_id", Text),
        Column("session_id", String),
        Column("id", String),
        PrimaryKeyConstraint("tenant_id", "session_id", "id"),
        UniqueConstraint("tenant_id", "id"),
    )
    assert [columns for _, columns in unique_keys(table) if columns[:2] != ["tenant_id", "session_id"]] == [
        ["tenant_id", "id"]
    ]
