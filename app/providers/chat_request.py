"""The ``POST /chat`` pipeline without HTTP or storage: model view in, provider request body out.

model-view messages -> prompt mutations -> serializer (ChatMessages) -> settle + provider adapter (payload).
The HTTP layer loads the session, projects the model view (with ``ProjectionContext.provider`` and
``model`` set to the request's, so reasoning is kept only for the model that produced it) and calls
``build_chat_request``. It never reads the database, the clock or the network.
"""

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from app.engine.kinds import Kind
from app.projections.types import Diagnostics, ProjectedMessage, Projection, Repair
from app.providers.caching import (
    CacheTarget,
    Placed,
    PrefixResume,
    PromptPrefix,
    answered_tail,
    check_cache,
    history_key,
    measure_prefix,
    place_breakpoints,
    stable_units,
    written_reach,
)
from app.providers.errors import EmptyConversation
from app.providers.mutations import Mutation, apply_mutations, parse_mutations
from app.providers.prefill import check_prefill
from app.providers.registry import adapter_for, build_settled, check_max_output_tokens, check_model
from app.providers.request_settings import NO_SETTINGS, RequestSettings
from app.providers.sendable_text import NUL_REFUSED
from app.providers.serializer import to_chat_messages
from app.providers.tool_definitions import parse_tools, switch_tools


@dataclass(slots=True)
class ChatRequest:
    provider: str
    model: str
    payload: dict[str, Any]
    """The exact request body for ``provider``, ready to send."""
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    """The projection's diagnostics, plus one injected note per mutation and every mutation, serializer and
    adapter repair."""
    prefix: PromptPrefix | None = None
    """The payload's stable prefix, measured before any cache mark was placed."""
    breakpoints: list[str] = field(default_factory=list)
    """The cache breakpoints placed, by name (``app.providers.caching``)."""
    unchanged: bool | None = None
    """Whether the payload starts with the ``previous`` prefix given (``None``: none was given)."""
    shared: int | None = None
    """Bytes at the payload's start that the ``previous`` request wrote to the provider's cache
    (``Measured.shared``; ``None``: none was given)."""


class RepairStages(NamedTuple):
    """``Diagnostics.repairs`` by the step that made them. The serializer and the adapter walk the messages
    once, in order (the adapter then adds what concerns the whole payload), so theirs follow the messages; the
    model view and settle make several passes, and the mutations apply where they point."""

    view: tuple[Repair, ...]
    mutations: tuple[Repair, ...]
    serializer: tuple[Repair, ...]
    settle: tuple[tuple[Repair, ...], ...]
    """Pass by pass, each pass's in message order (``settle_in_passes``)."""
    adapter: tuple[Repair, ...]

    def flat(self) -> list[Repair]:
        settled = [repair for found in self.settle for repair in found]
        return [*self.view, *self.mutations, *self.serializer, *settled, *self.adapter]


@dataclass(slots=True)
class Draft:
    """A payload before its prefix is measured and marked. Never edited once made: finishing works on a copy,
    so a later turn may splice its units."""

    provider: str
    model: str
    payload: dict[str, Any]
    diagnostics: Diagnostics
    repair_stages: RepairStages
    """``diagnostics.repairs`` by the step that made them."""
    answered: bool
    """Whether the settled conversation ends on what really answers its last assistant turn (``answered_tail``)."""
    talked: bool
    """Whether anything but system text is sent (else the head is not part of the prefix)."""
    summary_text: str | None
    """The compaction summary as the model view sends it, where a cache mark may go."""


def build_chat_request(
    projection: Projection | Sequence[ProjectedMessage],
    *,
    provider: str,
    model: str,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    mutations: Sequence[Mutation] | Sequence[Mapping[str, Any]] | None = None,
    max_output_tokens: int | None = None,
    settings: RequestSettings = NO_SETTINGS,
    tool_switches: Mapping[str, bool] | None = None,
    cache: CacheTarget | None = None,
    previous: PromptPrefix | None = None,
) -> ChatRequest:
    """Everything checked before any work: an unknown provider, a bad tool, mutation or token limit, or a
    prefill the target cannot take raises an ``InvalidInput`` (422) naming the field. ``tool_switches``:
    opencode's tools map (``{"bash": true, "edit": false}``), which leaves switched-off tools out of ``tools``.
    ``cache``: the cache policy and what placing it needs; ``None`` places nothing. ``previous``: the stable
    prefix of the previous request of the same parameters, to say whether this payload still starts with it."""
    draft = draft_chat_request(
        projection,
        provider=provider,
        model=model,
        system=system,
        tools=tools,
        mutations=mutations,
        max_output_tokens=max_output_tokens,
        settings=settings,
        tool_switches=tool_switches,
        cache=cache,
    )
    return finish_chat_request(draft, cache=cache, previous=previous).request


def draft_chat_request(
    projection: Projection | Sequence[ProjectedMessage],
    *,
    provider: str,
    model: str,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    mutations: Sequence[Mutation] | Sequence[Mapping[str, Any]] | None = None,
    max_output_tokens: int | None = None,
    settings: RequestSettings = NO_SETTINGS,
    tool_switches: Mapping[str, bool] | None = None,
    cache: CacheTarget | None = None,
    continues: bool = False,
) -> Draft:
    """``build_chat_request`` up to the payload: checks, mutations, serializer, settle and adapter.
    ``continues``: the messages follow a start built apart (a later turn's tail), which no first turn is made
    up for."""
    adapter_for(provider)
    check_model(model)
    definitions, switched_off = switch_tools(parse_tools(tools), tool_switches or {})
    check_max_output_tokens(max_output_tokens)
    check_prefill(provider, model, settings)
    if cache is not None:
        check_cache(provider, model, cache.policy)
        settings = replace(settings, cached_content=cache.policy.cached_content)
    parsed = _mutations(mutations)
    if isinstance(projection, Projection):
        messages, diagnostics = projection.messages, _copy(projection.diagnostics)
    else:
        messages, diagnostics = list(projection), Diagnostics()
    remove_nul = provider in NUL_REFUSED
    mutated, notes, mutation_repairs = apply_mutations(messages, parsed, remove_nul=remove_nul)
    if not mutated and not (system and system.strip()):
        raise EmptyConversation()
    diagnostics.injected_notes.extend(notes)
    if switched_off:
        diagnostics.injected_notes.append(
            f"tools {', '.join(switched_off)} left out: the run's tools map turns them off"
        )
    chat_messages, serializer_repairs = to_chat_messages(mutated, system=system, remove_nul=remove_nul)
    built = build_settled(
        provider,
        chat_messages,
        model=model,
        tools=definitions,
        max_output_tokens=max_output_tokens,
        settings=settings,
        continues=continues,
    )
    stages = RepairStages(
        tuple(diagnostics.repairs),
        tuple(mutation_repairs),
        tuple(serializer_repairs),
        tuple(map(tuple, built.settle_repairs)),
        tuple(built.adapter_repairs),
    )
    diagnostics.repairs = stages.flat()
    return Draft(
        provider,
        model,
        built.payload,
        diagnostics,
        stages,
        answered=answered_tail(built.settled.messages),
        talked=any(message["role"] != "system" for message in chat_messages),
        summary_text=_summary_text(mutated),
    )


@dataclass(frozen=True, slots=True)
class Finished:
    request: ChatRequest
    resume: PrefixResume | None
    """Where measuring a later turn's payload may start (``finish_chat_request``'s ``keep_at``)."""


def finish_chat_request(
    draft: Draft,
    *,
    cache: CacheTarget | None = None,
    previous: PromptPrefix | None = None,
    resume: PrefixResume | None = None,
    keep_at: int | None = None,
) -> Finished:
    """The draft's payload with its stable prefix measured and its cache marks placed, on a copy of the draft.
    ``resume``: measuring starts there (``app.providers.caching.measure_prefix``, which raises
    ``CannotResume`` when it cannot); ``keep_at``: where a later measure may start."""
    provider, key = draft.provider, history_key(draft.provider)
    payload = dict(draft.payload)
    if isinstance(payload.get(key), list):
        payload[key] = list(payload[key])
    stable = stable_units(provider, payload, answered=draft.answered)
    measured = measure_prefix(
        provider, payload, stable, head=draft.talked, previous=previous, resume=resume, keep_at=keep_at
    )
    placed = Placed([], set())
    if cache is not None:
        target = replace(cache, summary_text=draft.summary_text)
        placed = place_breakpoints(provider, draft.model, payload, target, measured, answered=draft.answered)
    prefix = replace(measured.prefix, written=written_reach(provider, measured, placed))
    request = ChatRequest(
        provider, draft.model, payload, draft.diagnostics, prefix, placed.names, measured.unchanged, measured.shared
    )
    return Finished(request, measured.resume)


def _summary_text(messages: Sequence[ProjectedMessage]) -> str | None:
    """The compaction summary's text as the model view sends it (it opens the live history)."""
    for message in messages[:3]:
        if message.semantic_type is Kind.COMPACT_SUMMARY:
            content = message.content
            if isinstance(content, str):
                return content
            return next((part["text"] for part in content if part.get("type") == "text"), None)
    return None


def _mutations(mutations: Sequence[Mutation] | Sequence[Mapping[str, Any]] | None) -> tuple[Mutation, ...]:
    if mutations is None:
        return ()
    if all(isinstance(mutation, Mutation) for mutation in mutations):
        return tuple(mutations)  # type: ignore[arg-type]
    return parse_mutations(mutations)  # type: ignore[arg-type]


def _copy(diagnostics: Diagnostics) -> Diagnostics:
    """A copy, so that a cached projection's diagnostics never collect one request's notes."""
    return copy.deepcopy(diagnostics)
