"""Any string survives storage: escaped where ``jsonb`` cannot hold it and read back exactly, and the mark
set at write time covers every value that needed escaping (only marked messages are unescaped on read)."""

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app import lossless_json
from app.store.escaped_text import ESCAPE_MARK, escape_strings, unescape_strings
from app.store.storable import measure

texts = st.text(st.characters(codec=None, exclude_categories=()) | st.sampled_from(["\ud83d", "\x00", ESCAPE_MARK]))
"""Any text: NULs, surrogate halves and the escape mark included."""
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=10,
)


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(text for item in value.values() for text in strings(item))]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


@given(json_values)
def test_escaped_values_read_back_exactly_and_fit_jsonb(value: Any) -> None:
    escaped = escape_strings(value)
    assert unescape_strings(escaped) == value
    orjson.dumps(escaped)  # no surrogate left
    assert not any("\x00" in text for text in strings(escaped))


@given(json_values)
def test_the_write_time_mark_covers_every_value_that_needed_escaping(value: Any) -> None:
    if escape_strings(value) != value:
        assert measure(value, "metadata", 1_000).unusual_text


@given(json_values)
def test_lossless_json_reads_back_what_it_wrote_and_writes_what_orjson_writes_when_it_can(value: Any) -> None:
    written = lossless_json.dumps(value)
    assert lossless_json.loads(written) == value
    try:
        assert written == orjson.dumps(value)
    except orjson.JSONEncodeError:
        assert written.isascii()


def sorted_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@given(json_values, json_values)
def test_same_json_holds_exactly_when_both_values_write_the_same_json_with_sorted_members(
    left: Any, right: Any
) -> None:
    assert lossless_json.same_json(left, right) == (sorted_json(left) == sorted_json(right))


@given(json_values)
def test_a_value_is_the_same_json_as_what_storage_reads_back(value: Any) -> None:
    assert lossless_json.same_json(value, lossless_json.loads(lossless_json.dumps(value)))


@pytest.mark.parametrize(
    ("left", "right"),
    [(True, 1), (1, 1.0), (0.0, -0.0), ({"force": True}, {"force": 1}), ([1], [1.0]), (False, 0)],
)
def test_values_python_holds_equal_but_json_spells_apart_are_not_the_same_json(left: Any, right: Any) -> None:
    assert left == right
    assert not lossless_json.same_json(left, right)
