"""Text a provider takes, and the shortcuts that skip looking (ASCII text; a value orjson encodes) give what
looking everywhere gives."""

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.providers.sendable_text import REPLACEMENT, Changes, _join_pair, clean_text, cleaned, holds_surrogate

texts = st.text(st.characters(codec=None, exclude_categories=()) | st.sampled_from(["\ud83d", "\ude00", "\x00", "a"]))
"""Any text, lone and paired surrogate halves and NULs included."""
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_HALF = re.compile("[\ud800-\udfff]")


def looking_everywhere(text: str, remove_nul: bool) -> str:
    if remove_nul:
        text = text.replace("\x00", "")
    return _HALF.sub(REPLACEMENT, _PAIR.sub(_join_pair, text))


@given(texts, st.booleans())
def test_clean_text_is_what_looking_everywhere_gives(text: str, remove_nul: bool) -> None:
    changes = Changes()
    sent = clean_text(text, remove_nul=remove_nul, changes=changes)
    assert sent == looking_everywhere(text, remove_nul)
    sent.encode("utf-8")  # nothing left that UTF-8 cannot hold
    assert ("\x00" in sent) == (not remove_nul and "\x00" in text)
    assert changes.nuls == (text.count("\x00") if remove_nul else 0)
    assert changes.surrogates == sent.count(REPLACEMENT) - text.count(REPLACEMENT)


@given(json_values)
def test_holds_surrogate_answers_as_the_walk_does(value: Any) -> None:
    changes = Changes()
    cleaned(value, remove_nul=False, changes=changes)
    assert holds_surrogate(value) == (changes.surrogates > 0)


def test_each_change_is_reported_naming_the_message() -> None:
    changes = Changes()
    clean_text("a\x00\ud800", remove_nul=True, changes=changes)
    assert [(repair.rule, repair.detail, repair.message_ids) for repair in changes.repairs("the message", ("m1",))] == [
        ("unpaired-surrogates", "replaced 1 unpaired UTF-16 surrogate(s) with U+FFFD in the message", ("m1",)),
        ("nul-characters", "removed 1 NUL character(s) from the message", ("m1",)),
    ]
