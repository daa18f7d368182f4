"""Lone surrogates come out of request text, and the shortcuts that skip looking (ASCII text; a value orjson
encodes) give what looking everywhere gives."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.providers.surrogates import _LONE, _PAIR, _join_pair, _walk, clean_text, without_unpaired_surrogates

texts = st.text(st.characters(codec=None, exclude_categories=()) | st.sampled_from(["\ud83d", "\ude00", "a"]))
"""Any text, lone and paired surrogate halves included."""
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@given(texts)
def test_clean_text_is_what_replacing_every_pair_and_lone_half_gives(text: str) -> None:
    cleaned = clean_text(text)
    assert cleaned == _LONE.sub("", _PAIR.sub(_join_pair, text))
    cleaned.encode("utf-8")  # nothing left that UTF-8 cannot hold


@given(json_values)
def test_a_value_orjson_encodes_is_passed_on_as_the_walk_would(value: Any) -> None:
    assert without_unpaired_surrogates(value) == _walk(value)
