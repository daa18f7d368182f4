"""The consistency token: a WAL position as PostgreSQL prints it, ordered as the log is."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.store.consistency import format_position, parse_position


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_a_position_reads_back_as_itself(position: int) -> None:
    assert parse_position(format_position(position)) == position


def test_positions_compare_as_the_log_orders_them() -> None:
    assert parse_position("0/FFFFFFFF") < parse_position("1/0") < parse_position("1/16B3748") < parse_position("A/0")


def test_the_notation_is_postgresqls_own() -> None:
    assert format_position(parse_position("16/b374d848")) == "16/B374D848"


@pytest.mark.parametrize("text", ["", "0", "0/", "/1", "0/1/2", "g/1", "123456789/0", "0/ 1", "-1/0"])
def test_anything_else_is_not_a_position(text: str) -> None:
    with pytest.raises(ValueError, match="not a WAL position"):
        parse_position(text)
