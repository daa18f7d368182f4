"""Prompt mutators: synthetic content for one request, applied to the model view before serialization.

``append`` / ``prepend`` add a message at an end; ``appendTo`` adds parts to the last user or assistant
message; ``insertAfter`` / ``insertBefore`` add a message next to the one holding a given stored message id.
A mutation is never stored and never fakes an id or a timestamp: the messages it adds name no source message.
Each applied mutation is described for the diagnostics. A target that does not exist is an error, not a
silent no-op. A mutation's parts are made sendable here (``app.providers.sendable_text``: unpaired UTF-16
surrogates become U+FFFD, NUL characters go where the target refuses them), with a repair naming the message
they went into: mutation text is request text, never stored, so never marked, and the serializer cleans only
the stored messages marked at write time.

Wire shape (camelCase, as ``POST /chat`` takes it)::

    {"op": "append" | "prepend", "role": "user" | "assistant" | "system", "parts": [...]}
    {"op": "appendTo", "target": "last-user" | "last-assistant", "parts": [...]}
    {"op": "insertAfter" | "insertBefore", "messageId": "m3", "role": "user", "parts": [...]}

``role`` defaults to ``user``; ``parts`` are content parts a message of that role may carry (text for system;
text, image, file for user; text for assistant), in the stored part shapes (``app.engine.parts``) they are
validated against, so a mutation part is refused where an appended message's part would be.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, assert_never, cast

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from app.engine.kinds import Kind, Role
from app.engine.parts import SystemPart, UserPart, part_models, part_type
from app.projections.types import ProjectedMessage, ProjectedMetadata, Repair, View
from app.providers.errors import InvalidMutation, MutationTargetNotFound
from app.providers.sendable_text import Changes, cleaned

MutationOp = Literal["append", "prepend", "appendTo", "insertAfter", "insertBefore"]
AppendTarget = Literal["last-user", "last-assistant"]
MutationRole = Literal["system", "user", "assistant"]

_OPS: tuple[MutationOp, ...] = ("append", "prepend", "appendTo", "insertAfter", "insertBefore")
_TARGETS: tuple[AppendTarget, ...] = ("last-user", "last-assistant")
_ROLE_UNIONS: dict[str, Any] = {
    "system": SystemPart,
    "user": UserPart,
    # Text only, as for system: a mutation never fakes reasoning or a tool call the model did not make.
    "assistant": SystemPart,
}
_ROLE_PARTS: dict[str, TypeAdapter[Any]] = {role: TypeAdapter(union) for role, union in _ROLE_UNIONS.items()}
_TAG_ERRORS = frozenset({"union_tag_invalid", "union_tag_not_found", "model_attributes_type", "model_type"})
"""Errors about a part as a whole (not an object, or of a type the role does not carry)."""
_KIND_OF_ROLE: dict[str, Kind] = {
    "system": Kind.SYSTEM_NOTE,
    "user": Kind.USER_INPUT,
    "assistant": Kind.ASSISTANT_TEXT,
}
MUTATION_NOTE = "mutation"
"""Marks a projected message (or parts) a mutation added, in ``metadata.notes``."""


@dataclass(frozen=True, slots=True)
class Mutation:
    op: MutationOp
    parts: tuple[dict[str, Any], ...]
    role: MutationRole = "user"
    target: AppendTarget | None = None
    """``appendTo`` only."""
    message_id: str | None = None
    """``insertAfter`` / ``insertBefore`` only: a stored message id (matched against ``source_message_ids``)."""


def parse_mutations(raw: Sequence[Mapping[str, Any]] | None) -> tuple[Mutation, ...]:
    """Mutations from their wire shape; a malformed one raises ``InvalidMutation`` naming the field."""
    return tuple(_parse(index, item) for index, item in enumerate(raw or ()))


def _parse(index: int, item: Any) -> Mutation:
    if not isinstance(item, Mapping):
        raise InvalidMutation("a mutation must be an object", index=index)
    op = item.get("op")
    if op not in _OPS:
        raise InvalidMutation(f"op must be one of {', '.join(_OPS)}", index=index, field="op")
    allowed = {"op", "parts"} | ({"target"} if op == "appendTo" else {"role"})
    if op in ("insertAfter", "insertBefore"):
        allowed.add("messageId")
    extra = sorted(set(item) - allowed)
    if extra:
        raise InvalidMutation(f"{op} does not take {', '.join(extra)}", index=index, field=extra[0])
    role = item.get("role", "user")
    target = item.get("target")
    if op == "appendTo":
        if target not in _TARGETS:
            raise InvalidMutation("target must be last-user or last-assistant", index=index, field="target")
        role = "user" if target == "last-user" else "assistant"
    elif role not in _ROLE_PARTS:
        raise InvalidMutation("role must be user, assistant or system", index=index, field="role")
    message_id = item.get("messageId")
    if op in ("insertAfter", "insertBefore") and (not isinstance(message_id, str) or not message_id):
        raise InvalidMutation("messageId must be a non-empty string", index=index, field="messageId")
    parts = item.get("parts")
    if not isinstance(parts, list) or not parts:
        raise InvalidMutation("parts must be a non-empty list", index=index, field="parts")
    _check_parts(parts, role, index)
    return Mutation(
        op=cast(MutationOp, op),
        parts=tuple(dict(part) for part in parts),
        role=cast(MutationRole, role),
        target=cast(AppendTarget | None, target),
        message_id=message_id,
    )


def _check_parts(parts: list[Any], role: str, index: int) -> None:
    """The parts validated against the stored part shapes for ``role``, by their camelCase names only (the
    parts go on as given, so a snake_case key would reach the payload as it is); the first error raises
    ``InvalidMutation`` naming its field. A key the shape does not declare is refused too: a stored part keeps
    one (a newer SDK wrote it), but a mutation is this request's own text, where it can only be a mistake."""
    shapes = _ROLE_PARTS[role]
    for number, part in enumerate(parts):
        try:
            shape = shapes.validate_python(part, by_alias=True, by_name=False)
        except ValidationError as invalid:
            raise _invalid_part(invalid.errors()[0], role, index, number) from None
        if shape.model_extra:
            key = sorted(shape.model_extra)[0]
            field = f"parts[{number}].{key}"
            raise InvalidMutation(f"a {part['type']} part does not take {key}", index=index, field=field)


def _invalid_part(error: ErrorDetails, role: str, index: int, number: int) -> InvalidMutation:
    path = error["loc"]
    field = f"parts[{number}]"
    if error["type"] in _TAG_ERRORS or not path:
        kinds = ", ".join(sorted(_role_part_types(role)))
        return InvalidMutation(f"a {role} mutation takes parts of type {kinds}", index=index, field=field)
    shape, *inside = path
    key = ".".join(str(step) for step in inside)
    field = f"{field}.{key}"
    if error["type"] in ("missing", "string_type") and len(inside) == 1:
        return InvalidMutation(f"a {shape} part needs a string {key}", index=index, field=field)
    if error["type"] == "extra_forbidden":
        return InvalidMutation(f"a {shape} part does not take {key}", index=index, field=field)
    return InvalidMutation(f"a {shape} part's {key}: {error['msg']}", index=index, field=field)


def _role_part_types(role: str) -> frozenset[str]:
    return frozenset(map(part_type, part_models(_ROLE_UNIONS[role])))


def apply_mutations(
    messages: Sequence[ProjectedMessage], mutations: Sequence[Mutation], *, remove_nul: bool = False
) -> tuple[list[ProjectedMessage], list[str], list[Repair]]:
    """The messages with every mutation applied in order, one note per mutation for the diagnostics, and the
    repairs made to the mutations' text (naming the message the parts went into); ``remove_nul``: the target
    refuses NUL characters."""
    result = list(messages)
    notes: list[str] = []
    repairs: list[Repair] = []
    for index, mutation in enumerate(mutations):
        changes = Changes()
        parts = cleaned(list(mutation.parts), remove_nul=remove_nul, changes=changes)
        if changes.surrogates or changes.nuls:
            mutation = replace(mutation, parts=tuple(parts))
        result, note, ids = _apply(result, mutation, index)
        notes.append(f"mutation {index}: {note}")
        repairs.extend(changes.repairs(f"mutations[{index}].parts", ids))
    return result, notes, repairs


def _apply(
    messages: list[ProjectedMessage], mutation: Mutation, index: int
) -> tuple[list[ProjectedMessage], str, tuple[str, ...]]:
    """The messages with ``mutation`` applied, its note, and the source ids of the message its parts went into
    (none for a message it added)."""
    count = f"{len(mutation.parts)} part{'s' if len(mutation.parts) != 1 else ''}"
    match mutation.op:
        case "append":
            return [*messages, _synthetic(mutation, messages)], f"appended a {mutation.role} message ({count})", ()
        case "prepend":
            return [_synthetic(mutation, messages), *messages], f"prepended a {mutation.role} message ({count})", ()
        case "appendTo":
            role: Role = "user" if mutation.target == "last-user" else "assistant"
            position = next((n for n in range(len(messages) - 1, -1, -1) if messages[n].role == role), None)
            if position is None:
                raise MutationTargetNotFound(f"there is no {role} message to append to", index=index, field="target")
            target = messages[position]
            updated = [*messages[:position], _extend(target, mutation.parts), *messages[position + 1 :]]
            return updated, f"appended {count} to the {mutation.target} message", target.source_message_ids
        case "insertAfter" | "insertBefore":
            position = next(
                (n for n, message in enumerate(messages) if mutation.message_id in message.source_message_ids), None
            )
            if position is None:
                raise MutationTargetNotFound(
                    f"message {mutation.message_id!r} is not in the model view", index=index, field="messageId"
                )
            at = position + 1 if mutation.op == "insertAfter" else position
            where = "after" if mutation.op == "insertAfter" else "before"
            inserted = [*messages[:at], _synthetic(mutation, messages), *messages[at:]]
            return inserted, f"inserted a {mutation.role} message ({count}) {where} {mutation.message_id}", ()
        case unreachable:
            assert_never(unreachable)


def _synthetic(mutation: Mutation, messages: Sequence[ProjectedMessage]) -> ProjectedMessage:
    view = messages[0].view if messages else View.MODEL
    content: Any = mutation.parts[0]["text"] if mutation.role == "system" else list(mutation.parts)
    if mutation.role == "system" and len(mutation.parts) > 1:
        content = "\n\n".join(part["text"] for part in mutation.parts)
    return ProjectedMessage(
        view=view,
        role=mutation.role,
        semantic_type=_KIND_OF_ROLE[mutation.role],
        source_message_ids=(),
        content=content,
        metadata=ProjectedMetadata(notes=(MUTATION_NOTE,), extra={"synthetic": True, "mutation": mutation.op}),
    )


def _extend(message: ProjectedMessage, parts: tuple[dict[str, Any], ...]) -> ProjectedMessage:
    content = message.content
    existing = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    notes = (*message.metadata.notes, MUTATION_NOTE)
    return replace(message, content=[*existing, *parts], metadata=replace(message.metadata, notes=notes))
