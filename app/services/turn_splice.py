"""The next turn's ``/chat`` built from the last one's: the pipeline runs again only on the last assistant turn
and what follows it.

An agent appends a message or two a turn and asks ``/chat`` again with the same parameters. Everything before
the payload's last assistant turn comes out the same in the next payload (the stable prefix of
``app.providers.caching``), so the last build keeps what it made before that turn (``KeptTurn``: the draft's
units, the model view's messages and diagnostics, the prefix measure's state) and the next build runs the model
view, serializer, settle and adapter on the messages from the *cut* (where the last assistant turn starts) on,
as the continuation of a conversation (no first user turn made up before it), and splices the result after
what it kept.

Why a splice is the fresh build byte for byte. A turn is kept only when building the messages from the cut
alone gave exactly the tail of the whole build: the same payload head (key order included), the same units
after the kept ones, the same model-view messages, diagnostics that split into a part before the cut and the
tail's own (repairs step by step and settle's pass by pass, each listed in message order; none of the model
view's before the cut; no tool-call id rewritten), the same "answered" verdict, and a cut
inside the stable prefix. Whatever the messages before the cut do to the build has then reached the tail
already. A splice is taken only when the kept messages are the very objects of the window now (a kept
window extended by appends: anything else reads the window again, ``app.services.window_reuse``), when the
messages appended since hold no compaction record and mention no tool call or approval id of a message
before the cut (a late result, a reused id), and when the tail's build rewrote no tool-call id (one rewritten
could meet an id before the cut). Anything else builds the whole window. A property test builds random
growing histories both ways after every append, for every target, and compares payload, diagnostics and view.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, TypeVar

from app.context.accounting import Tally, stale_through, tally
from app.engine.message import EngineMessage
from app.projections.live_history import COMPACTION_KINDS
from app.projections.types import Diagnostics, ProjectedMessage, Projection, ProjectionContext, Repair, View
from app.providers.caching import (
    CacheTarget,
    CannotResume,
    PrefixResume,
    PromptPrefix,
    history_key,
    history_units,
    stable_units,
)
from app.providers.chat_request import ChatRequest, Draft, Finished, RepairStages, finish_chat_request
from app.providers.errors import EmptyConversation

T = TypeVar("T")
BuildTail = Callable[[Sequence[EngineMessage]], tuple[Projection, Draft]]
"""The model view and draft of some messages, under the request's parameters."""

UNIT_OVERHEAD = 512
"""What a kept unit and model-view message hold besides their text (shared with the kept window), in bytes."""
MIN_KEPT_UNITS = 3
"""A cut leaves at least this many units before it: the summary opens the live history in the first two,
where a cache mark may go, and its text is read from the first three model-view messages."""


@dataclass(frozen=True, slots=True)
class TurnCut:
    """Where the next turn may splice a build, found before the prefix is measured (which keeps its state
    there): everything before the cut."""

    count: int
    """How many window messages the build read."""
    last: EngineMessage
    cut: int
    """The window index where the tail built again starts."""
    cut_message: EngineMessage
    ids_before: frozenset[str]
    """Every tool call and approval id the messages before the cut mention."""
    draft: Draft
    """The build's draft: its payload's head and its units, the first ``units`` of them before the cut."""
    units: int
    view: tuple[ProjectedMessage, ...]
    """The model view's messages before the cut."""
    view_diagnostics: Diagnostics
    """The model view's diagnostics of the messages before the cut."""
    draft_diagnostics: Diagnostics
    """The draft's diagnostics of the messages before the cut."""
    repair_stages: RepairStages
    """The draft's repairs of the messages before the cut, by step (the model view's and the mutations' none)."""

    def kept(self, resume: PrefixResume, spliced: "KeptTurn | None" = None) -> "KeptTurn":
        """The turn kept at this cut, measured up to it (``resume``); ``spliced``: the kept turn the build was
        spliced after, whose resume points before this cut it carries on."""
        earlier = () if spliced is None else tuple(each for each in spliced.resumes() if each.units < resume.units)
        return KeptTurn(
            self.count,
            self.last,
            self.cut,
            self.cut_message,
            self.ids_before,
            self.draft,
            self.units,
            self.view,
            self.view_diagnostics,
            self.draft_diagnostics,
            self.repair_stages,
            resume,
            tuple(replace(each, unit_lengths=()) for each in reversed(earlier[: MAX_CARRIED - 1])),
        )


@dataclass(frozen=True, slots=True)
class KeptTurn(TurnCut):
    """What a build keeps for the next turn's: its cut, and the state measuring and counting reached there."""

    resume: PrefixResume
    """The prefix measure's state after the units before the cut."""
    earlier: tuple[PrefixResume, ...] = ()
    """The measure's states at a few earlier cuts, oldest first, without their unit lengths (``resume``'s start
    with them): the next turn's cut may lie before this one, and measuring it cannot start after it."""
    counted: tuple["Counted", ...] = ()
    """The context count's tallies of the window before this cut and a few earlier ones, oldest first
    (``count_turn`` adds them), for the same reason."""

    def resumes(self) -> list[PrefixResume]:
        """Where measuring a later payload may start, latest first."""
        lengths = self.resume.unit_lengths
        return [self.resume, *(replace(each, unit_lengths=lengths[: each.units]) for each in reversed(self.earlier))]

    @property
    def size(self) -> int:
        """Estimated bytes beyond the kept window's (whose text the units and messages share): their shells."""
        return UNIT_OVERHEAD * (self.units + len(self.view) + len(self.ids_before))


@dataclass(frozen=True, slots=True)
class TurnBuild:
    view: Projection
    request: ChatRequest
    next_turn: KeptTurn | None
    """What the next turn's build may splice, when this build kept it."""
    joined: KeptTurn | None
    """The kept turn this build was spliced after, when it was."""

    @property
    def spliced(self) -> bool:
        return self.joined is not None

    @property
    def outcome(self) -> str:
        """How the build went: ``spliced`` from the kept turn given, or ``built`` whole."""
        return "spliced" if self.spliced else "built"


def build_turn(
    messages: Sequence[EngineMessage],
    build_whole: BuildTail,
    build_tail: BuildTail,
    *,
    cache: CacheTarget | None,
    previous: PromptPrefix | None,
    kept: KeptTurn | None,
    keep: bool,
) -> TurnBuild:
    """The model view and payload of ``messages``: spliced from ``kept`` when it may be, else built whole
    (``build_whole``), and, when ``keep``, what the next turn's build may splice."""
    spliced = None if kept is None else splice(kept, messages, build_tail)
    if spliced is None:
        kept = None
        view, draft = build_whole(messages)
    else:
        view, draft = spliced
    cut = None
    if keep:
        stable = stable_units(draft.provider, draft.payload, answered=draft.answered)
        cut = cut_turn(messages, view, draft, stable, build_tail, kept)
    keep_at = None if cut is None else cut.units
    finished = _finished(draft, cache, previous, kept, keep_at)
    next_turn = None if cut is None or finished.resume is None else cut.kept(finished.resume, kept)
    return TurnBuild(view, finished.request, next_turn, kept)


def _finished(
    draft: Draft, cache: CacheTarget | None, previous: PromptPrefix | None, kept: KeptTurn | None, keep_at: int | None
) -> Finished:
    """``finish_chat_request``, measuring from the latest point ``kept`` may resume at that lies before every
    point asked for, or from the head."""
    for resume in kept.resumes() if kept is not None else ():
        try:
            return finish_chat_request(draft, cache=cache, previous=previous, resume=resume, keep_at=keep_at)
        except CannotResume:
            continue
    return finish_chat_request(draft, cache=cache, previous=previous, keep_at=keep_at)


class Counted(NamedTuple):
    """The context count's tally of a window's messages before ``cut``, of which the model view sends its first
    ``sent`` messages."""

    cut: int
    sent: int
    tally: Tally


MAX_CARRIED = 8
"""Measure states and count tallies a kept turn carries: its own cut's and those of the last cuts before it."""


def count_turn(
    messages: Sequence[EngineMessage],
    view: Projection,
    ctx: ProjectionContext,
    spliced: KeptTurn | None,
    next_turn: KeptTurn | None,
) -> tuple[Tally, KeptTurn | None]:
    """The context count's tally of the window (``app.context.accounting.tally``), counting only what follows
    the latest cut ``spliced`` carries a tally of when the build was spliced from it, and ``next_turn`` with the
    tallies before its cut (the latest of ``spliced``'s before it, and its own)."""
    stale = stale_through(messages, view.diagnostics.applied_compact_boundary_id)
    carried = spliced.counted if spliced is not None else ()
    end = len(messages) if next_turn is None else next_turn.cut
    start = next((each for each in reversed(carried) if each.cut <= end), Counted(0, 0, Tally()))
    if next_turn is None:
        return start.tally + tally(messages[start.cut :], view.messages[start.sent :], ctx, stale), None
    cut, sent = next_turn.cut, len(next_turn.view)
    kept = start.tally + tally(messages[start.cut : cut], view.messages[start.sent : sent], ctx, stale)
    counted = kept + tally(messages[cut:], view.messages[sent:], ctx, stale)
    earlier = tuple(each for each in carried if each.cut < cut)
    return counted, replace(next_turn, counted=(*earlier, Counted(cut, sent, kept))[-MAX_CARRIED:])


def splice(kept: KeptTurn, messages: Sequence[EngineMessage], build_tail: BuildTail) -> tuple[Projection, Draft] | None:
    """The window's model view and draft from ``kept`` and the messages from its cut on, or ``None`` when a
    splice cannot be trusted to give the fresh build."""
    if len(messages) < kept.count or messages[kept.count - 1] is not kept.last:
        return None
    if messages[kept.cut] is not kept.cut_message:
        return None
    appended = messages[kept.count :]
    if any(message.kind in COMPACTION_KINDS for message in appended) or not kept.ids_before.isdisjoint(
        mentioned_ids(appended)
    ):
        return None
    built = _tail(build_tail, messages[kept.cut :])
    if built is None:
        return None
    view, draft = built
    if _rewrote_ids(draft.diagnostics) or view.diagnostics.applied_compact_boundary_id is not None:
        return None
    key = history_key(draft.provider)
    before = kept.draft
    if _head(draft.payload, key) != _head(before.payload, key):
        return None
    units = history_units(before.provider, before.payload)[: kept.units] + history_units(draft.provider, draft.payload)
    view_diagnostics = _joined(kept.view_diagnostics, view.diagnostics, view.diagnostics.repairs)
    whole_view = Projection(View.MODEL, [*kept.view, *view.messages], view_diagnostics)
    stages = _joined_stages(kept.repair_stages, draft.repair_stages)
    whole = Draft(
        draft.provider,
        draft.model,
        {name: units if name == key else value for name, value in before.payload.items()},
        _joined(kept.draft_diagnostics, draft.diagnostics, stages.flat()),
        stages,
        answered=draft.answered,
        talked=before.talked,
        summary_text=before.summary_text,
    )
    return whole_view, whole


def cut_turn(
    messages: Sequence[EngineMessage],
    view: Projection,
    draft: Draft,
    stable_units: int,
    build_tail: BuildTail,
    spliced: KeptTurn | None = None,
) -> TurnCut | None:
    """Where the next turn may splice the build of ``messages`` (``view``, ``draft``): the nearest start of an
    assistant turn whose tail, built alone, gives exactly the build's tail. Turn starts are tried at growing
    distances (the last, the second last, the fourth, the eighth...), since what the tail must hold to build
    alike (a tool call, when none was given and the adapter adds a placeholder tool) may lie a few turns back.
    ``spliced``: the kept turn this build was spliced from, whose ids need not be gathered again and whose cut
    is tried too, before any earlier one (``_cuts_tried``).

    A cut whose tail mentions a tool call or approval id that a message before it mentions too (an id reused
    turn after turn, a late result) is passed over unbuilt: the whole build pairs or renames that id knowing
    the earlier mention, which the tail built alone cannot, so they would not agree (and the next turn's
    splice refuses such ids anyway). A history that reuses its ids on every turn keeps no turn and pays for
    no tail build trying to."""
    mentions = _Mentions(messages, spliced)
    for cut in _cuts_tried(messages, spliced):
        if mentions.cross(cut):
            continue
        found = _cut_at(cut, messages, view, draft, stable_units, build_tail, mentions.before(cut))
        if found is not None:
            return found
    return None


def _cut_at(
    cut: int,
    messages: Sequence[EngineMessage],
    view: Projection,
    draft: Draft,
    stable_units: int,
    build_tail: BuildTail,
    ids_before: frozenset[str],
) -> TurnCut | None:
    built = _tail(build_tail, messages[cut:])
    if built is None:
        return None
    tail_view, tail = built
    key = history_key(draft.provider)
    units, tail_units = history_units(draft.provider, draft.payload), history_units(tail.provider, tail.payload)
    kept_units = len(units) - len(tail_units)
    kept_view = len(view.messages) - len(tail_view.messages)
    if not MIN_KEPT_UNITS <= kept_units <= stable_units or kept_view < MIN_KEPT_UNITS:
        return None
    if tail.answered != draft.answered or _rewrote_ids(tail.diagnostics):
        return None
    if _head(tail.payload, key) != _head(draft.payload, key) or units[kept_units:] != tail_units:
        return None
    if view.messages[kept_view:] != tail_view.messages:
        return None
    view_before = _before(view.diagnostics, tail_view.diagnostics)
    draft_before = _before(draft.diagnostics, tail.diagnostics)
    stages = _stages_before(draft.repair_stages, tail.repair_stages)
    if view_before is None or draft_before is None or stages is None:
        return None
    if view.diagnostics.repairs != tail_view.diagnostics.repairs:
        return None  # the model view's passes list their repairs pass by pass, not message by message
    return TurnCut(
        len(messages),
        messages[-1],
        cut,
        messages[cut],
        ids_before,
        draft,
        kept_units,
        tuple(view.messages[:kept_view]),
        view_before,
        draft_before,
        stages,
    )


def _tail(build_tail: BuildTail, messages: Sequence[EngineMessage]) -> tuple[Projection, Draft] | None:
    """The tail's build, or ``None`` when it sends nothing (the whole build has more before it)."""
    try:
        return build_tail(messages)
    except EmptyConversation:
        return None


def mentioned_ids(messages: Iterable[EngineMessage]) -> set[str]:
    """Every tool call and approval id the messages' parts mention."""
    found: set[str] = set()
    for each in map(_ids_of, messages):
        found.update(each)
    return found


def _ids_of(message: EngineMessage) -> list[str]:
    """The tool call and approval ids one message's parts mention (a whole window's messages, when a turn is
    first kept: one lookup per key and part)."""
    content = message.content
    if content.__class__ is str:
        return []
    found: list[str] = []
    for part in content:
        if part.__class__ is dict:
            call = part.get("toolCallId")
            if call.__class__ is str:
                found.append(call)
            approval = part.get("approvalId")
            if approval.__class__ is str:
                found.append(approval)
    return found


class _Mentions:
    """Where a window first mentions each tool call and approval id, for the cuts ``cut_turn`` tries, latest
    first. With the kept turn a build was spliced from, the messages before its cut are not read again for a
    cut after it: its ``ids_before`` holds their ids."""

    def __init__(self, messages: Sequence[EngineMessage], spliced: KeptTurn | None) -> None:
        self._messages = messages
        self._read_from = spliced.cut if spliced is not None else 0
        self._earlier: frozenset[str] = spliced.ids_before if spliced is not None else frozenset()
        """Ids mentioned before ``_read_from``."""
        self._first: dict[str, int] = {}
        self._read(self._read_from, len(messages))
        self._tail: set[str] = set()
        self._tail_start = len(messages)

    def cross(self, cut: int) -> bool:
        """Whether the messages from ``cut`` on mention an id that a message before it mentions too."""
        if cut < self._read_from:
            self._read(0, self._read_from)
            self._read_from, self._earlier = 0, frozenset()
        for each in map(_ids_of, self._messages[cut : self._tail_start]):
            self._tail.update(each)
        self._tail_start = cut
        first = self._first
        return any(id_ in self._earlier or first[id_] < cut for id_ in self._tail)

    def before(self, cut: int) -> frozenset[str]:
        """Every id the messages before ``cut`` mention (``cross`` asked of it first)."""
        return self._earlier | {id_ for id_, index in self._first.items() if index < cut}

    def _read(self, start: int, end: int) -> None:
        """Takes in the first mentions in ``start:end``, which lies before every range read so far."""
        first = self._first
        for index, each in enumerate(map(_ids_of, self._messages[start:end]), start):
            for id_ in each:
                if first.get(id_, end) > index:
                    first[id_] = index


MAX_CUTS_TRIED = 10
"""Cuts tried, the last assistant turn back to the 512th from the end."""


def _turn_starts(messages: Sequence[EngineMessage]) -> list[int]:
    """The window indexes where an assistant turn starts (an assistant message after one that is not), from
    the end back, keeping the 1st, 2nd, 4th, 8th... found."""
    starts: list[int] = []
    wanted = 1
    found = 0
    for index in range(len(messages) - 1, 0, -1):
        if messages[index].role == "assistant" and messages[index - 1].role != "assistant":
            found += 1
            if found == wanted:
                starts.append(index)
                wanted *= 2
                if len(starts) == MAX_CUTS_TRIED:
                    break
    return starts


def _cuts_tried(messages: Sequence[EngineMessage], spliced: KeptTurn | None) -> list[int]:
    """``_turn_starts``, latest first, with the cut of the kept turn the build was spliced from among them. Its
    tail builds alike (the splice built that very tail), and the measure's state and the count's tally are
    kept there: when the newest turns cannot be cut (answers without a tool call, under a placeholder tool),
    the doubling steps would jump past it to a cut before it, and the next turn would measure and count its
    whole window from the head again."""
    starts = _turn_starts(messages)
    if spliced is None or spliced.cut in starts:
        return starts
    return sorted([*starts, spliced.cut], reverse=True)


def _head(payload: dict[str, Any], key: str) -> list[tuple[str, Any]]:
    """The payload's fields besides its history, in order, with the history's place."""
    return [(name, None if name == key else value) for name, value in payload.items()]


def _rewrote_ids(diagnostics: Diagnostics) -> bool:
    return any(repair.rule == "tool-call-id" for repair in diagnostics.repairs)


def _before(whole: Diagnostics, tail: Diagnostics) -> Diagnostics | None:
    """What the messages before the tail added to ``whole``, when each list of it is exactly that followed by
    ``tail``'s; its repairs, which a build lists by step, are split apart (``Draft.repair_stages``)."""
    if tail.applied_compact_boundary_id is not None:
        return None
    hidden = _head_of(whole.hidden_message_ids, tail.hidden_message_ids)
    truncated = _head_of(whole.truncated_message_ids, tail.truncated_message_ids)
    notes = _head_of(whole.injected_notes, tail.injected_notes)
    reasons = _head_of(list(whole.reasons.items()), list(tail.reasons.items()))
    if hidden is None or truncated is None or notes is None or reasons is None:
        return None
    if not tail.reasons.keys().isdisjoint(key for key, _ in reasons):
        return None
    return Diagnostics(list(hidden), list(truncated), whole.applied_compact_boundary_id, list(notes), [], dict(reasons))


def _stages_before(whole: RepairStages, tail: RepairStages) -> RepairStages | None:
    """The repairs the messages before the tail added, when only steps that list theirs in message order (the
    serializer, each of settle's passes, the adapter) made any: the model view's passes share one list, and
    the mutations apply where they point, so theirs cannot be split between the two."""
    serializer = _head_of(whole.serializer, tail.serializer)
    adapter = _head_of(whole.adapter, tail.adapter)
    passes = [_head_of(mine, theirs) for mine, theirs in zip(whole.settle, tail.settle, strict=True)]
    if serializer is None or adapter is None or any(found is None for found in passes):
        return None
    if (whole.view, whole.mutations) != (tail.view, tail.mutations):
        return None
    settle = tuple(tuple(found or ()) for found in passes)
    return RepairStages((), (), tuple(serializer), settle, tuple(adapter))


def _joined_stages(before: RepairStages, tail: RepairStages) -> RepairStages:
    return RepairStages(
        before.view + tail.view,
        before.mutations + tail.mutations,
        before.serializer + tail.serializer,
        tuple(mine + theirs for mine, theirs in zip(before.settle, tail.settle, strict=True)),
        before.adapter + tail.adapter,
    )


def _head_of(whole: Sequence[T], tail: Sequence[T]) -> Sequence[T] | None:
    """``whole`` without ``tail`` at its end, when it ends so."""
    cut = len(whole) - len(tail)
    return whole[:cut] if cut >= 0 and whole[cut:] == tail else None


def _joined(before: Diagnostics, tail: Diagnostics, repairs: Iterable[Repair]) -> Diagnostics:
    return Diagnostics(
        [*before.hidden_message_ids, *tail.hidden_message_ids],
        [*before.truncated_message_ids, *tail.truncated_message_ids],
        before.applied_compact_boundary_id,
        [*before.injected_notes, *tail.injected_notes],
        list(repairs),
        {**before.reasons, **tail.reasons},
    )
