"""The serializer's as-is path (a message whose parts need no repair goes on as it is) gives exactly what the
part-by-part path gives, for stored histories and for parts of every shape, well-formed or not."""

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.kinds import Kind
from app.engine.persisted import PersistedMessage
from app.projections.types import ProjectedMessage, Repair, View
from app.providers.chat_message import PART_KEYS
from app.providers.serializer import _convert, to_chat_messages
from tests.providers.projected import raw
from tests.strategies import histories, texts

_VALUES = st.sampled_from(["string", "string", "", 7, None, {"type": "text", "value": "v"}])
_PRESENCE = st.sampled_from(["absent", "string", "string", "string", "other"])
_PART_TYPES = st.sampled_from([*PART_KEYS, "hologram"])


@st.composite
def _parts(draw: st.DrawFn) -> Any:
    """A part of any known type (or an unknown one), each key it may hold absent, a string or something else,
    sometimes with a key no part defines; now and then not a dict at all."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.sampled_from(["text", None, 3, ["type", "text"]]))
    part_type = draw(_PART_TYPES)
    part: dict[str, Any] = {} if draw(st.integers(0, 19)) == 0 else {"type": part_type}
    for key in sorted(PART_KEYS.get(part_type, frozenset({"text"})) - {"type"}):
        presence = draw(_PRESENCE)
        if presence != "absent":
            part[key] = f"{key} value" if presence == "string" else draw(_VALUES)
    if draw(st.integers(0, 4)) == 0:
        part["id"] = draw(_VALUES)
    return part


_ROLES = st.sampled_from(["user", "assistant", "tool"])
_CONTENTS = st.one_of(texts, st.lists(_parts(), max_size=4))


def _paths_agree(message: ProjectedMessage) -> None:
    repairs: list[Repair] = []
    general = _convert(message, repairs)
    assert to_chat_messages([message]) == ([general], repairs)


@settings(max_examples=400)
@given(role=_ROLES, content=_CONTENTS)
def test_as_is_path_agrees_with_the_part_by_part_path_on_any_parts(role: Any, content: Any) -> None:
    _paths_agree(ProjectedMessage(View.MODEL, role, Kind.USER_INPUT, ("m1",), content))


@given(history=histories())
def test_as_is_path_agrees_with_the_part_by_part_path_on_stored_histories(history: list[PersistedMessage]) -> None:
    for message in raw(*history):
        if message.role != "system":
            # Cleaning marked text comes before either path and is pinned on its own (test_serializer.py).
            _paths_agree(replace(message, unusual_text=False))
