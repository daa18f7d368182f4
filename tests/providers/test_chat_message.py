"""The ChatMessage part types (read by the type checker) and the part tables (read at run time) agree: both
describe the stored part shapes, so a part type added to one and not the other fails here."""

from typing import Protocol, get_args, get_type_hints

from app.providers import chat_message
from app.providers.chat_message import PART_KEYS, REQUIRED_STRINGS, ROLE_PARTS


class _PartType(Protocol):
    """A ChatMessage part type (a TypedDict class), as these tests read it."""

    @property
    def __required_keys__(self) -> frozenset[str]: ...


PART_TYPES: set[_PartType] = {
    chat_message.TextPart,
    chat_message.ImagePart,
    chat_message.FilePart,
    chat_message.ReasoningPart,
    chat_message.ToolCallPart,
    chat_message.ToolResultPart,
    chat_message.ToolApprovalRequestPart,
    chat_message.ToolApprovalResponsePart,
}


def _type_of(part: _PartType) -> str:
    (literal,) = get_args(get_type_hints(part)["type"])
    return str(literal)


def test_each_chat_message_part_type_has_the_keys_of_its_stored_shape() -> None:
    assert {_type_of(part): frozenset(get_type_hints(part)) for part in PART_TYPES} == PART_KEYS


def test_the_required_strings_are_required_in_the_chat_message_part_types() -> None:
    for part in PART_TYPES:
        hints = get_type_hints(part)
        for key in REQUIRED_STRINGS[_type_of(part)]:
            assert key in part.__required_keys__ and hints[key] is str


def test_each_role_carries_the_parts_its_chat_message_type_allows() -> None:
    unions = {
        "user": chat_message.UserPart,
        "assistant": chat_message.AssistantPart,
        "tool": chat_message.ToolPart,
    }
    assert {role: frozenset(map(_type_of, get_args(union))) for role, union in unions.items()} == ROLE_PARTS
