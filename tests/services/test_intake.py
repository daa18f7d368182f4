"""Preparing a batch to store: the ids it gives the messages that came without one."""

import os
import re
import uuid
from datetime import UTC, datetime

import pytest

from app.api.auth import LOCAL_PRINCIPAL
from app.services.intake import MessageInput, new_message_ids, prepare_batch
from tests.conftest import settings_for_tests

NOW = datetime(2026, 12, 5, tzinfo=UTC)
MESSAGE_ID = re.compile(r"msg_[0-9a-f]{32}")


def said(text: str, message_id: str | None = None) -> MessageInput:
    return MessageInput(role="user", content=[{"type": "text", "text": text}], id=message_id)


def test_messages_without_an_id_get_distinct_random_uuid4_ids() -> None:
    batch = prepare_batch([said(f"line {n}") for n in range(500)], LOCAL_PRINCIPAL, settings_for_tests(), NOW)

    ids = [message.id for message in batch]
    assert len(set(ids)) == 500
    assert all(MESSAGE_ID.fullmatch(message_id) for message_id in ids)
    assert {uuid.UUID(message_id.removeprefix("msg_")).version for message_id in ids} == {4}


def test_a_given_id_is_kept_and_only_the_others_are_drawn() -> None:
    batch = prepare_batch(
        [said("first", "m1"), said("second"), said("third", "m3")], LOCAL_PRINCIPAL, settings_for_tests(), NOW
    )

    assert [batch[0].id, batch[2].id] == ["m1", "m3"]
    assert MESSAGE_ID.fullmatch(batch[1].id)


def test_a_batch_draws_its_ids_with_one_call_into_the_random_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.urandom`` gives up the interpreter lock and takes it back at once; called once a message from a
    worker thread it kept the event loop from the lock for the whole batch."""
    draws: list[int] = []
    urandom = os.urandom

    def counted(size: int) -> bytes:
        draws.append(size)
        return urandom(size)

    monkeypatch.setattr(os, "urandom", counted)
    prepare_batch([said(f"line {n}") for n in range(1_000)], LOCAL_PRINCIPAL, settings_for_tests(), NOW)

    assert draws == [16 * 1_000]


def test_no_ids_wanted_draws_nothing() -> None:
    assert new_message_ids(0) == []
