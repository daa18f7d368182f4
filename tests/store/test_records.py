"""One column list per table: the record type's fields generate the read SQL and the Core column list, so
they cannot disagree, and every field is a column of its table."""

import dataclasses
from typing import Any

import pytest
from sqlalchemy import Column, Table

from app.engine.persisted import PersistedMessage
from app.store import messages as message_store
from app.store.records import MessageRecord, RunRecord, SessionRecord
from app.store.runs import RUN_COLUMNS
from app.store.sessions import SESSION_COLUMNS
from app.store.tables import messages, runs, sessions


@pytest.mark.parametrize(
    ("record", "table", "columns"),
    [
        (SessionRecord, sessions, SESSION_COLUMNS),
        (RunRecord, runs, RUN_COLUMNS),
        (MessageRecord, messages, message_store.MESSAGE_COLUMNS),
    ],
    ids=["sessions", "runs", "messages"],
)
def test_a_records_fields_are_its_tables_columns_in_read_order(
    record: Any, table: Table, columns: tuple[Column[Any], ...]
) -> None:
    fields = record._fields
    assert set(fields) <= set(table.c.keys())
    assert [column.name for column in columns] == list(fields)
    assert all(column.table is table for column in columns)


def test_the_hand_written_message_reads_select_the_record_fields() -> None:
    assert ", ".join(MessageRecord._fields) == message_store._READ_COLUMNS
    for sql in (message_store._GET_SQL, *message_store._PAGE_SQL.values()):
        assert sql.startswith(f"SELECT {', '.join(MessageRecord._fields)} FROM messages ")


def test_the_live_history_read_selects_what_promotion_takes() -> None:
    """Every field a column of that name, but the stored size, which the generated size columns give."""
    persisted = [field.name for field in dataclasses.fields(PersistedMessage)]
    assert persisted[-1] == "stored_bytes" and set(persisted[:-1]) <= set(messages.c.keys())
    columns = ", ".join([*persisted[:-1], "content_bytes + metadata_bytes"])
    for sql in (message_store._FROM_SEQ_SQL, message_store._BY_KINDS_SQL):
        assert sql.startswith(f"SELECT {columns} FROM messages ")
