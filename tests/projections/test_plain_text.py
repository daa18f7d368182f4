"""What counts as blank: ``is_blank`` says what ``strip`` would, without copying the text."""

from hypothesis import given
from hypothesis import strategies as st

from app.projections.plain_text import is_blank

_SPACES = st.sampled_from([" ", "\n", "\t", "\u00a0", "\u2003", "\u3000", "\x1c", "\u200b", "a", "\ufeff"])


@given(st.one_of(st.text(), st.text(_SPACES)))
def test_is_blank_is_what_strip_says(text: str) -> None:
    assert is_blank(text) == (not text.strip())
