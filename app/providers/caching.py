"""Prompt caching: the part of a payload that stays byte for byte the same as a session grows, and the marks
that ask a provider to cache it.

**The stable prefix.** Providers cache a prompt by its prefix, in their own order: Anthropic tools, system,
messages; OpenAI Chat the tools, then the messages; Responses its instructions, tools, then input items;
Gemini its system instruction, tools, then contents; the AI SDK its system, tools, then messages. The
*history units* are the payload's list of turns or items (``messages``, ``input``, ``contents``). For one
session and the same request parameters, appending messages only extends a payload: everything before the
*unsettled tail* comes out the same in the next payload. The tail is the last assistant turn and whatever
follows it (tool results still coming in, the user turn a later message merges into, the synthetic "Continue"
or "interrupted" results that a later message replaces); before the first assistant turn everything is tail.
A property test holds every target to this. What breaks a prefix is a change of history itself: a newly
applied compaction, a prune, or a metadata amendment that changes the model view.

**Breakpoints.** ``cache`` in ``POST /chat`` is ``"auto"`` (the default), ``"none"``, or
``{"ttl": "5m"|"1h", "breakpoints": [...], "cachedContent": "..."}``. For Anthropic (and Claude through the AI
SDK, as ``providerOptions.anthropic.cacheControl``) the breakpoints are ``tools`` (the last tool definition),
``system`` (the system prompt), ``summary`` (the compaction summary's block) and ``history`` (the last
cacheable block of the stable prefix and of the request; ``_places``): four at most, as Anthropic allows,
never on a thinking block or an empty text, and never where the prefix up to it is shorter than the model's
minimum cacheable length (below it Anthropic caches nothing, silently). OpenAI caches prefixes on its own:
``auto`` sets ``prompt_cache_key``, a keyed hash of the tenant and session, so requests of one session meet
on one cache machine. Gemini caches implicitly; an explicit ``cachedContent`` (a ``cachedContents/...`` name the caller
created) is passed through by the Gemini adapter, without the system instruction and tools it holds. Pure.
"""

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson
import xxhash

from app.engine.model_ref import model_ref
from app.errors import InvalidInput
from app.providers.conversation import CONTINUE, INTERRUPTED

BREAKPOINTS: tuple[str, ...] = ("tools", "system", "summary", "history")
TTLS: tuple[str, ...] = ("5m", "1h")
MAX_BREAKPOINTS = 4
"""Anthropic refuses a request with more than four ``cache_control`` blocks."""
BYTES_PER_TOKEN = 4
"""The payload's size in tokens is estimated as the stored messages are (``app.engine.tokens``)."""
_CACHE_KEYS = frozenset({"ttl", "breakpoints", "cachedContent"})
_UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})
_ASSISTANT_ITEMS = frozenset({"function_call", "reasoning", "web_search_call", "item_reference"})
"""Responses input items the model wrote (an assistant ``message`` aside)."""


class InvalidCache(InvalidInput):
    slug, title = "invalid-cache", "Invalid cache"

    def __init__(self, detail: str, *, field: str = "cache") -> None:
        super().__init__(f"{field}: {detail}", field=field)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    mode: Literal["auto", "none", "explicit"] = "auto"
    ttl: str | None = None
    breakpoints: tuple[str, ...] = BREAKPOINTS
    cached_content: str | None = None
    breakpoints_given: bool = False
    """Whether the caller named the breakpoints: only named ones are refused by a target that takes none (the
    default asks for all four, which such a target simply places none of)."""

    @property
    def on(self) -> bool:
        return self.mode != "none"

    def as_key(self) -> dict[str, Any]:
        """What the request parameters' hash takes of it."""
        return {"mode": self.mode, "ttl": self.ttl, "breakpoints": list(self.breakpoints), "cc": self.cached_content}


AUTO = CachePolicy()
NO_CACHE = CachePolicy(mode="none", breakpoints=())


def parse_cache(value: object) -> CachePolicy:
    """The policy ``cache`` asks for; anything malformed raises ``InvalidCache`` naming the field."""
    if value is None or value == "auto":
        return AUTO
    if value == "none":
        return NO_CACHE
    if not isinstance(value, Mapping):
        raise InvalidCache('must be "auto", "none" or an object {ttl, breakpoints, cachedContent}')
    unknown = sorted(set(value) - _CACHE_KEYS)
    if unknown:
        raise InvalidCache(f"unknown key; known: {', '.join(sorted(_CACHE_KEYS))}", field=f"cache.{unknown[0]}")
    ttl = value.get("ttl")
    if ttl is not None and ttl not in TTLS:
        raise InvalidCache(f"must be one of {', '.join(TTLS)}, got {ttl!r}", field="cache.ttl")
    given = "breakpoints" in value
    points = value["breakpoints"] if given else list(BREAKPOINTS)
    if not isinstance(points, list) or any(point not in BREAKPOINTS for point in points):
        raise InvalidCache(f"must be a list of {', '.join(BREAKPOINTS)}", field="cache.breakpoints")
    if len(set(points)) != len(points):
        raise InvalidCache("names a breakpoint twice", field="cache.breakpoints")
    cached = value.get("cachedContent")
    if cached is not None and (not isinstance(cached, str) or not cached.strip()):
        raise InvalidCache("must be a cachedContents/... name", field="cache.cachedContent")
    return CachePolicy("explicit", ttl, tuple(point for point in BREAKPOINTS if point in points), cached, given)


def takes_breakpoints(provider: str, model: str) -> bool:
    """Whether the target takes ``cache_control`` marks: Anthropic, and Claude through the AI SDK."""
    if provider == "anthropic":
        return True
    if provider == "ai-sdk":
        found = model_ref(model)
        return found is not None and found.family == "anthropic"
    return False


def check_cache(provider: str, model: str, policy: CachePolicy) -> None:
    """An explicit ask the target cannot take is a 422 naming the field (``auto`` asks only what it can)."""
    if policy.mode != "explicit":
        return
    marks = takes_breakpoints(provider, model)
    if policy.breakpoints_given and policy.breakpoints and not marks:
        raise InvalidCache(f"{provider} {model} caches prefixes on its own and takes none", field="cache.breakpoints")
    if policy.ttl is not None and not marks:
        raise InvalidCache(f"{provider} {model} takes no cache TTL", field="cache.ttl")
    if policy.cached_content is not None and provider != "gemini":
        raise InvalidCache("only the gemini target takes a cachedContents name", field="cache.cachedContent")


def check_cached_content(provider: str, policy: CachePolicy, *, system: str | None, tools: object) -> None:
    """A cached content holds the system instruction and tools it was created with, and Gemini refuses a
    request that sets them beside it: a request that names them itself is a 422 naming its fields (what a run
    or the history brings is left out instead, said so)."""
    if provider != "gemini" or policy.cached_content is None:
        return
    asked = [name for name, value in (("system", system is not None and system.strip()), ("tools", tools)) if value]
    if asked:
        names = " and ".join(asked)
        raise InvalidCache(
            f"Gemini takes no {names} beside cache.cachedContent, which holds those it was created with",
            field=asked[0],
        )


def min_cacheable_tokens(model: str) -> int:
    """Anthropic's minimum cacheable prompt length for ``model``: 4,096 tokens for Opus 4.5/4.6 and Haiku 4.5,
    2,048 for Sonnet 4.6 and Haiku 3/3.5, 1,024 for the other Claude models."""
    name = model.lower().rsplit("/", 1)[-1]
    if any(word in name for word in ("opus-4-5", "opus-4.5", "opus-4-6", "opus-4.6", "haiku-4-5", "haiku-4.5")):
        return 4096
    if any(word in name for word in ("sonnet-4-6", "sonnet-4.6", "haiku-3", "3-haiku", "3-5-haiku")):
        return 2048
    return 1024


def prompt_cache_key(secret: bytes, tenant_id: str, session_id: str) -> str:
    """OpenAI's ``prompt_cache_key`` for a session: an HMAC, so nobody can guess it from the session id."""
    message = f"{tenant_id}\x00{session_id}".encode("utf-8", "surrogatepass")
    return "pc_" + hmac.new(secret, message, hashlib.sha256).hexdigest()[:40]


# --- the stable prefix ------------------------------------------------------------------------------------


def _head_keys(provider: str) -> tuple[str, ...]:
    match provider:
        case "anthropic":
            return ("tools", "system")
        case "openai":
            return ("tools",)
        case "openai-responses":
            return ("instructions", "tools")
        case "gemini":
            return ("systemInstruction", "tools")
        case _:
            return ("system", "tools")


def history_key(provider: str) -> str:
    """The key of the payload's turns or items."""
    return {"openai-responses": "input", "gemini": "contents"}.get(provider, "messages")


def history_units(provider: str, payload: Mapping[str, Any]) -> list[Any]:
    """The payload's turns or items, in order."""
    units = payload.get(history_key(provider))
    return units if isinstance(units, list) else []


def _assistant_side(provider: str, unit: Mapping[str, Any]) -> bool:
    if provider == "gemini":
        return unit.get("role") == "model"
    if provider == "openai-responses":
        return unit.get("role") == "assistant" or unit.get("type") in _ASSISTANT_ITEMS
    return unit.get("role") == "assistant"


def stable_units(provider: str, payload: Mapping[str, Any], *, answered: bool = False) -> int:
    """How many leading history units are settled. ``answered`` (``answered_tail``): the conversation ends on
    messages that really answer its last assistant turn, so all but the last unit are (a later message may
    still merge into the last); otherwise all before the last assistant turn (0 with none)."""
    units = history_units(provider, payload)
    if answered:
        return max(len(units) - 1, 0)
    index = len(units)
    while index and not _assistant_side(provider, units[index - 1]):
        index -= 1
    while index and _assistant_side(provider, units[index - 1]):
        index -= 1
    return index


def answered_tail(settled: Sequence[Mapping[str, Any]]) -> bool:
    """Whether settled messages end on what really answers their last assistant turn: they do not end on it
    (``settle`` then adds a "Continue" turn, or it is a prefill), and nothing after it is a result ``settle``
    made up (an "interrupted" or "denied" one, which a late real result replaces). Then a later message can
    only merge into the payload's last unit."""
    last = next((n for n in range(len(settled) - 1, -1, -1) if settled[n]["role"] == "assistant"), None)
    if last is None:
        return not _made_up_turn(settled[-1]) if settled else False
    if last == len(settled) - 1 or _made_up_turn(settled[-1]):
        return False
    for message in settled[last + 1 :]:
        if message["role"] == "tool" and any(_made_up_result(part) for part in message["content"]):
            return False
    return True


def _made_up_turn(message: Mapping[str, Any]) -> bool:
    return bool(message["role"] == "user" and message["content"] == [{"type": "text", "text": CONTINUE}])


def _made_up_result(part: Mapping[str, Any]) -> bool:
    output = part.get("output") or {}
    return output.get("type") == "execution-denied" or output == {"type": "error-text", "value": INTERRUPTED}


@dataclass(frozen=True, slots=True)
class PromptPrefix:
    """A payload's stable prefix: the head (tools, system) and its first ``units`` history units."""

    units: int
    digest: str
    """XXH3-128 of the prefix's bytes, as each piece serializes (key order included), each piece after its
    length: a change detector, not a secret (the same prefix always gives the same digest)."""
    length: int
    """The prefix's length in bytes."""
    total_length: int
    """The whole payload's head and history in bytes, for the share the prefix is of it."""
    written: "CachedReach | None" = None
    """How far past the stable prefix the request writes the provider's cache, when it does: to its end."""

    @property
    def tokens(self) -> int:
        return self.length // BYTES_PER_TOKEN


@dataclass(frozen=True, slots=True)
class CachedReach:
    """A request's head and first ``units`` history units, which the provider caches as one entry: the whole
    request where OpenAI and Gemini cache a prompt on their own, or where a mark went on its last block."""

    units: int
    digest: str
    """Measured as ``PromptPrefix.digest`` is."""
    length: int


@dataclass(frozen=True, slots=True)
class PrefixResume:
    """Where measuring a payload can start instead of at its head: the digest's state after the head and the
    first ``units`` history units, and what measuring them found. Valid for a payload whose head and first
    ``units`` units are those measured (a later turn's payload, which only appends changed)."""

    units: int
    state: Any
    """The digest's state after the head and the first ``units`` units (copied before each use)."""
    length: int
    """Bytes hashed: the head's and the units'."""
    head_lengths: tuple[int, ...]
    unit_lengths: tuple[int, ...]


class CannotResume(ValueError):
    """The measure asked for reaches back before where the resume starts."""


@dataclass(frozen=True, slots=True)
class Measured:
    """One pass over a payload: its stable prefix, whether it starts with an earlier one, and each piece's
    size (head pieces, then history units), which placing breakpoints reads instead of serializing again."""

    prefix: PromptPrefix
    unchanged: bool | None
    """Whether the payload starts with the ``previous`` prefix given (``None``: none was given)."""
    head_lengths: tuple[int, ...]
    unit_lengths: tuple[int, ...]
    resume: PrefixResume | None = None
    """Where a later measure can start (``keep_at``), when one was asked for."""
    reach: CachedReach | None = None
    """The whole payload, which the provider may cache to its end (``PromptPrefix.written`` once it does)."""
    shared: int | None = None
    """Bytes at the payload's start that the ``previous`` request sent and wrote to the cache: its
    ``written`` reach when the payload starts with it, else its stable prefix when unchanged, else 0
    (``None``: no previous)."""


def measure_prefix(
    provider: str,
    payload: Mapping[str, Any],
    units: int | None = None,
    *,
    head: bool = True,
    previous: PromptPrefix | None = None,
    resume: PrefixResume | None = None,
    keep_at: int | None = None,
) -> Measured:
    """The prefix of ``units`` history units (the stable ones when ``None``), after the head (tools, system)
    unless ``head`` is false: with no conversation yet, a system note still joins the system text, and nothing
    is settled. Each piece is serialized once (key order counts) and hashed once, ``previous``'s prefix read
    off on the way. Marks a cache policy places (``cache_control``, ``cacheControl``) are not part of it:
    measure before they are placed. ``resume`` starts after the units an earlier measure of the same head and
    units covered (``CannotResume`` when a point asked for lies before them); ``keep_at`` asks for the
    ``PrefixResume`` after that many units."""
    history = history_units(provider, payload)
    units = min(stable_units(provider, payload) if units is None else units, len(history))
    compared = None if previous is None or previous.length == 0 else previous.units
    if compared is not None and compared > len(history):
        compared = None  # fewer units than the previous prefix held: it cannot be unchanged
    reached = None if previous is None or previous.written is None else previous.written.units
    points = (compared, keep_at, reached)
    wanted = {units} | {point for point in points if point is not None and point <= len(history)}
    if resume is None:
        digest, start, length = xxhash.xxh3_128(), 0, 0
        head_lengths: tuple[int, ...] = ()
        lengths: list[int] = []
        for piece in [payload.get(key) for key in _head_keys(provider)] if head else []:
            data = orjson.dumps(piece)
            head_lengths += (len(data),)
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
            length += len(data)
    else:
        if min(wanted) < resume.units:
            raise CannotResume(f"a point before unit {resume.units} was asked for")
        digest, start, length = resume.state.copy(), resume.units, resume.length
        head_lengths, lengths = resume.head_lengths, list(resume.unit_lengths)
    # One unit at a time, serialized, hashed and let go: holding a long history's bytes costs more than
    # encoding it (fresh memory, page by page).
    update = digest.update
    at: dict[int, tuple[Any, int]] = {}
    for n in range(start, len(history)):
        if n in wanted:
            at[n] = (digest.copy(), length)
        data = orjson.dumps(history[n])
        lengths.append(len(data))
        update(len(data).to_bytes(8, "big"))
        update(data)
        length += len(data)
    at[len(history)] = (digest, length)
    head_length = sum(head_lengths)
    prefix = PromptPrefix(units, at[units][0].hexdigest(), at[units][1], head_length + sum(lengths))
    unchanged: bool | None = None
    shared: int | None = None
    if previous is not None:
        found = at.get(compared) if compared is not None else None
        unchanged = previous.length == 0 or (found is not None and found[0].hexdigest() == previous.digest)
        shared = previous.length if unchanged else 0
        written = previous.written
        found = at.get(reached) if reached is not None else None
        if written is not None and found is not None and found[0].hexdigest() == written.digest:
            shared = max(shared, written.length)
    kept = None
    if keep_at is not None and keep_at in at:
        state, kept_length = at[keep_at]
        kept = PrefixResume(keep_at, state.copy(), kept_length, head_lengths, tuple(lengths[:keep_at]))
    end, end_length = at[len(history)]
    reach = CachedReach(len(history), end.hexdigest(), end_length)
    return Measured(prefix, unchanged, head_lengths, tuple(lengths), kept, reach, shared)


CACHES_ON_ITS_OWN = frozenset({"openai", "openai-responses", "gemini"})
"""Providers that cache every prompt's prefix without being asked (from 1,024 tokens)."""


def written_reach(provider: str, measured: Measured, placed: "Placed") -> CachedReach | None:
    """How far past its stable prefix a request writes the provider's cache: to its end where the provider
    caches prompts on its own or a history mark went on the last unit; else not past the prefix (``None``)."""
    reach = measured.reach
    if reach is None or reach.units == 0:
        return None
    return reach if provider in CACHES_ON_ITS_OWN or reach.units - 1 in placed.units else None


def prompt_prefix(
    provider: str, payload: Mapping[str, Any], units: int | None = None, *, head: bool = True
) -> PromptPrefix:
    """``measure_prefix``'s prefix alone."""
    return measure_prefix(provider, payload, units, head=head).prefix


def unchanged_prefix(provider: str, payload: Mapping[str, Any], previous: PromptPrefix) -> bool:
    """Whether ``payload`` starts with the stable prefix ``previous`` measured on an earlier payload."""
    return bool(measure_prefix(provider, payload, 0, previous=previous).unchanged)


# --- breakpoints ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CacheTarget:
    """What placing breakpoints needs to know besides the payload."""

    policy: CachePolicy
    min_tokens: int | None = None
    """The minimum cacheable length; ``None``: the model family's."""
    summary_text: str | None = None
    """The compaction summary as the model view sends it, to find its block."""
    cache_key: str | None = None
    """OpenAI's ``prompt_cache_key`` (``prompt_cache_key()``), or ``None`` for none."""


@dataclass(frozen=True, slots=True)
class Placed:
    names: list[str]
    """The breakpoints placed, in order."""
    units: set[int]
    """The history units a mark went into."""


def place_breakpoints(
    provider: str,
    model: str,
    payload: dict[str, Any],
    target: CacheTarget,
    measured: Measured,
    *,
    answered: bool = False,
) -> Placed:
    """Marks the payload as ``target.policy`` asks. Only ``payload`` itself and its history list are edited:
    a marked unit, block or tool list is a copy, so the units a later turn's payload reuses stay unmarked.
    ``answered`` (``answered_tail``): a history mark goes on the request's last block too."""
    policy = target.policy
    placed = Placed([], set())
    if not policy.on:
        return placed
    if provider in ("openai", "openai-responses"):
        if target.cache_key is not None:
            payload["prompt_cache_key"] = target.cache_key
        return placed
    if not takes_breakpoints(provider, model):
        return placed
    minimum = target.min_tokens if target.min_tokens is not None else min_cacheable_tokens(model)
    mark: dict[str, Any] = {"type": "ephemeral"}
    if policy.ttl == "1h":
        mark["ttl"] = "1h"
    places = _places(provider, payload, policy.breakpoints, target.summary_text, measured, answered)
    marked: set[tuple[str, int, Any]] = set()
    for name, tokens, where, key in places[:MAX_BREAKPOINTS]:
        if tokens < minimum or (*where, key) in marked:
            continue
        marked.add((*where, key))
        container = _writable(provider, payload, where)
        if where == _SYSTEM:
            container, key = _system_block(provider, payload)
        # A copy: the adapters pass parts on as the model view gave them, and those are never edited in place.
        block = dict(container[key])
        if provider == "anthropic":
            block["cache_control"] = dict(mark)
        else:
            options = dict(block.get("providerOptions") or {})
            options["anthropic"] = {**(options.get("anthropic") or {}), "cacheControl": dict(mark)}
            block["providerOptions"] = options
        container[key] = block
        placed.names.append(name)
        if where[0] == "unit":
            placed.units.add(where[1])
    return placed


_Where = tuple[str, int]
"""Where a block is: ``("tools", 0)``, ``_SYSTEM``, or ``("unit", n)`` (the content of history unit ``n``)."""
_Place = tuple[str, int, _Where, Any]
"""A breakpoint: its name, the prefix's tokens up to and including the block, where the block is and its
index or key there."""
_TOOLS: _Where = ("tools", 0)
_SYSTEM: _Where = ("system", 0)
"""Stands for the system prompt's place, made only when a mark goes on it (``_system_block``)."""


def _writable(provider: str, payload: dict[str, Any], where: _Where) -> Any:
    """The list or dict holding the block at ``where``, copied into ``payload`` the first time it is marked."""
    kind, n = where
    if kind == "tools":
        tools = payload["tools"]
        payload["tools"] = copied = list(tools) if isinstance(tools, list) else dict(tools)
        return copied
    if kind == "unit":
        units = payload[history_key(provider)]
        unit = units[n] = {**units[n], "content": list(units[n]["content"])}
        return unit["content"]
    return None


def _places(
    provider: str,
    payload: dict[str, Any],
    wanted: Sequence[str],
    summary: str | None,
    measured: Measured,
    answered: bool,
) -> list[_Place]:
    """Where the marks may go, in the order they are given up to the four allowed. The history takes two: the
    last cacheable block of the stable prefix, which the next request repeats whatever is appended, and,
    when the tail really answers the last assistant turn, the request's last block, so that what this turn
    adds is written once and read by the next (unless a user message merges into that last unit, which the
    first mark then survives); it is the one left out when a summary's mark takes the fourth place. Between
    them, Anthropic's look-back of about 20 blocks from a mark finds the previous request's entry whether or
    not a user message merged into its last unit."""
    anthropic = provider == "anthropic"
    places: list[_Place] = []
    units = history_units(provider, payload)
    seen = 0
    tools = payload.get("tools")
    if tools:
        seen += len(orjson.dumps(tools)) // BYTES_PER_TOKEN
        if "tools" in wanted:
            places.append(("tools", seen, _TOOLS, len(tools) - 1 if anthropic else list(tools)[-1]))
    system = payload.get("system")
    if system:
        seen += len(orjson.dumps(system)) // BYTES_PER_TOKEN
        if "system" in wanted:
            places.append(("system", seen, _SYSTEM, 0))
    stable = measured.prefix.units
    ends = (stable - 1, len(units) - 1) if answered else (stable - 1,)
    marked = {n for n in ends if 0 <= n < len(units)} if "history" in wanted else set()
    # The first two units take the summary's mark (the summary opens the live history there).
    summary_units = {n for n in (0, 1) if n < stable} if "summary" in wanted and summary is not None else set()
    history: list[_Place] = []
    lengths = measured.unit_lengths
    counted = 0
    for n in sorted(summary_units | marked):
        seen += sum(length // BYTES_PER_TOKEN for length in lengths[counted : n + 1])
        counted = n + 1
        content = units[n].get("content")
        if not isinstance(content, list):
            continue
        if n in summary_units:
            found = next((k for k, b in enumerate(content) if _is_text(b) and b.get("text") == summary), None)
            if found is not None:
                places.append(("summary", seen, ("unit", n), found))
        if n in marked:
            last = next((k for k in range(len(content) - 1, -1, -1) if _cacheable(content[k], anthropic)), None)
            if last is not None:
                history.append(("history", seen, ("unit", n), last))
    return places + history


def _system_block(provider: str, payload: dict[str, Any]) -> tuple[list[Any], int]:
    """The system prompt where a mark can go: Anthropic's one text block, the AI SDK's one system message (AI
    SDK 6 takes ``system`` as system messages, which carry ``providerOptions``)."""
    text = payload["system"]
    block = {"type": "text", "text": text} if provider == "anthropic" else {"role": "system", "content": text}
    payload["system"] = [block]
    return payload["system"], 0


def _is_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text"


def _cacheable(block: Any, anthropic: bool) -> bool:
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if anthropic:
        if kind in _UNCACHEABLE:
            return False
    elif kind == "reasoning":
        return False
    return kind != "text" or bool(str(block.get("text", "")).strip())
