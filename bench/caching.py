"""Prompt caching over a long agent session: how much of each request is the previous request's prefix, unchanged,
and what the input costs with the provider's cache against the same session without it.

A 200-turn agent session (``--turns``) is replayed turn by turn through the same pure pipeline ``POST /chat``
runs (model view, serializer, settle, adapter, breakpoints): every turn appends what an agent appends (a
prompt every few turns, the assistant's text and tool calls, their results of 1-6 KB, now and then a runtime
reminder), then builds the request. A large system prompt and ten tool schemas open every request. Halfway
the runtime prunes old tool results, later it compacts (boundary and summary, a kept tail): the turns right
after those break the prefix on purpose and are reported apart.

Reported, per target (Anthropic with ``cache: "auto"``, OpenAI Chat and Gemini):
- the share of input tokens that are the previous request's stable prefix unchanged, over every turn after
  the first but the two that follow a prune or a compaction (target: at least 95%);
- the input per turn in input-token equivalents at the provider's published cache prices (the model
  catalog's cache-read and cache-write rates against its input rate): Anthropic reads what this request
  repeats of the previous one up to its last history breakpoint and writes the rest up to its own at the
  5-minute rate;
  OpenAI and Gemini serve the unchanged prefix on their own (from 1,024 tokens, OpenAI in 128-token steps);
  beside it the same session with no cache at all (what Anthropic charges with ``cache: "none"``; OpenAI and
  Gemini cache a stable prefix on their own, so for them it is what an unstable prefix would cost).

Tokens are the payload's JSON bytes / 4, as ``app.providers.caching`` counts them. Pure: no database, no server.
``.venv/bin/python -m bench.caching [--turns 200]``.
"""

import argparse
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import orjson

from app.context.catalog import bundled_catalog
from app.context.cost import TokenUsage, price_usage
from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from app.providers.caching import AUTO, BYTES_PER_TOKEN, NO_CACHE, CacheTarget, PromptPrefix, history_units
from app.providers.chat_request import ChatRequest, build_chat_request
from tests import builders as b

TARGETS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5", "gemini": "gemini-2.5-pro"}
SYSTEM = "You are a careful coding agent working in a large repository. " + "Follow the house rules. " * 500
TOOLS = [
    {
        "name": f"tool_{n}",
        "description": f"Tool {n}: " + "does one careful thing with the repository. " * 30,
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}},
    }
    for n in range(10)
]
PRUNE_AT, COMPACT_AT = 100, 150
"""The turns before which the runtime prunes and compacts."""
OPENAI_STEP, PROVIDER_MINIMUM = 128, 1024


@dataclass(slots=True)
class Session:
    """The stored history, as the store numbers it, and its promoted form."""

    messages: list[PersistedMessage] = field(default_factory=list)

    def append(self, *messages: PersistedMessage) -> None:
        start = len(self.messages) + 1
        self.messages += [
            replace(m, id=m.id or f"m{start + n}") for n, m in enumerate(b.history(*messages, start_seq=start))
        ]

    def engine(self) -> list[EngineMessage]:
        return [promote(message) for message in self.messages]


def agent_turn(session: Session, turn: int) -> None:
    """What an agent appends between two requests: the answer to the last one and the tool results."""
    if turn % 5 == 0:
        session.append(b.user(f"Next task {turn}: fix the failing test in module {turn % 17}."))
    calls = [(f"call_{turn}_{k}", f"tool_{(turn + k) % 10}") for k in range(1 + turn % 2)]
    parts = [b.text_part(f"Looking at step {turn}.")] + [
        b.call_part(call_id, name, {"path": f"src/file_{turn}.py"}) for call_id, name in calls
    ]
    session.append(b.assistant(parts, provider="anthropic", model=TARGETS["anthropic"]))
    for k, (call_id, name) in enumerate(calls):
        output = f"result of {name} at turn {turn}\n" + "line of output text\n" * (50 + (turn * 37 + k * 11) % 250)
        session.append(b.tool_result(call_id, output, tool_name=name))
    if turn % 10 == 7:
        session.append(b.reminder("<system-reminder>\nThe plan is unchanged.\n</system-reminder>"))


def prune(session: Session) -> None:
    """Marks every tool result but the newest 40 turns' as pruned, as ``POST /prune`` does."""
    results = [n for n, m in enumerate(session.messages) if m.role == "tool"]
    for n in results[:-60]:
        message = session.messages[n]
        session.messages[n] = replace(message, metadata={**message.metadata, "compactedAt": b.COMPACTED_AT})


def compact(session: Session) -> None:
    """A boundary and its summary, keeping the newest 15% of the messages verbatim, as a compaction writes."""
    through = session.messages[int(len(session.messages) * 0.85)].id
    boundary_id = f"boundary_{len(session.messages)}"
    session.append(
        b.boundary(boundary_id, through=through),
        b.summary(boundary_id, "Summary of the work so far: " + "we fixed tests. " * 200),
    )


def build(session: Session, provider: str, cache: CacheTarget, previous: PromptPrefix | None) -> ChatRequest:
    model = TARGETS[provider]
    ctx = ProjectionContext(provider=provider, model=model)
    view = project(View.MODEL, session.engine(), ctx)
    return build_chat_request(
        view, provider=provider, model=model, system=SYSTEM, tools=TOOLS, cache=cache, previous=previous
    )


@dataclass(slots=True)
class Tally:
    """Input tokens over the measured turns: all of them, the unchanged prefix, and the cost in equivalents."""

    total: int = 0
    unchanged: int = 0
    cached: float = 0.0
    uncached: float = 0.0
    turns: int = 0
    lowest: float = 1.0
    """The smallest unchanged share of one measured turn."""
    broken: list[float] = field(default_factory=list)
    """The unchanged share of the turns right after the prune and the compaction."""

    def add(self, total: int, unchanged: int, cached: float, uncached: float) -> None:
        self.lowest = min(self.lowest, unchanged / total)
        self.total += total
        self.unchanged += unchanged
        self.cached += cached
        self.uncached += uncached
        self.turns += 1


def rates(provider: str) -> tuple[float, float]:
    """(cache read, cache write) per input token, from the catalog's published prices."""
    found = bundled_catalog().lookup(provider, TARGETS[provider])
    assert found is not None
    at = datetime.now(UTC)
    tokens = 100_000
    plain = price_usage(found, TokenUsage(input=tokens), at=at)
    read = price_usage(found, TokenUsage(cache_read=tokens), at=at)
    write = price_usage(found, TokenUsage(cache_write=tokens), at=at)
    assert plain is not None and read is not None and write is not None
    return float(read.total / plain.total), float(write.total / plain.total)


def equivalents(provider: str, built: ChatRequest, previous: ChatRequest | None, read: float, write: float) -> float:
    """The request's input in input-token equivalents, with the cache its provider will serve."""
    assert built.prefix is not None
    total = built.prefix.total_length // BYTES_PER_TOKEN
    if provider == "anthropic":
        served = 0 if previous is None else repeated_through_mark(previous, built)
        written = max(marked_tokens(built) - served, 0)
        return total - served - written + read * served + write * written
    if previous is None or not built.shared:
        return float(total)
    served = built.shared // BYTES_PER_TOKEN
    if provider == "openai":
        served -= served % OPENAI_STEP
    served = served if served >= PROVIDER_MINIMUM else 0
    return total - served + read * served


def marked_tokens(built: ChatRequest) -> int:
    """The tokens up to the request's last history breakpoint (0 with none): what it asks Anthropic to cache."""
    units = history_units("anthropic", built.payload)
    last = max((n for n, unit in enumerate(units) if marked(unit)), default=-1)
    if last < 0:
        return 0
    head = [built.payload.get("tools"), built.payload.get("system")]
    return len(orjson.dumps(unmarked([*head, *units[: last + 1]]))) // BYTES_PER_TOKEN


def repeated_through_mark(previous: ChatRequest, built: ChatRequest) -> int:
    """The tokens of ``previous`` up to the latest of its history breakpoints that ``built`` repeats byte for
    byte (marks aside): what the cache serves this request."""
    before, now = history_units("anthropic", previous.payload), history_units("anthropic", built.payload)
    head = unmarked([previous.payload.get("tools"), previous.payload.get("system")])
    if head != unmarked([built.payload.get("tools"), built.payload.get("system")]):
        return 0
    for n in range(min(len(before), len(now)) - 1, -1, -1):
        if marked(before[n]) and unmarked(before[: n + 1]) == unmarked(now[: n + 1]):
            return len(orjson.dumps([*head, *unmarked(before[: n + 1])])) // BYTES_PER_TOKEN
    return 0


def marked(unit: Any) -> bool:
    return bool(unmarked(unit) != unit)


def unmarked(value: Any) -> Any:
    """``value`` without its cache marks, which change from request to request as the marks move."""
    if isinstance(value, dict):
        return {key: unmarked(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value


def replay(turns: int) -> dict[str, Tally]:
    session = Session()
    session.append(b.user("Fix the failing tests in this repository."))
    tallies = {provider: Tally() for provider in TARGETS}
    previous: dict[str, ChatRequest | None] = dict.fromkeys(TARGETS)
    prices = {provider: rates(provider) for provider in TARGETS}
    broken = {PRUNE_AT, COMPACT_AT}
    for turn in range(1, turns + 1):
        if turn == PRUNE_AT:
            prune(session)
        if turn == COMPACT_AT:
            compact(session)
        for provider in TARGETS:
            before = previous[provider]
            measured = None if before is None else before.prefix
            cached = build(session, provider, CacheTarget(AUTO), measured)
            plain = build(session, provider, CacheTarget(NO_CACHE), None)
            assert cached.prefix is not None and plain.prefix is not None
            total = cached.prefix.total_length // BYTES_PER_TOKEN
            unchanged = measured.tokens if measured is not None and cached.unchanged else 0
            if before is not None and turn in broken:
                tallies[provider].broken.append(unchanged / total)
            elif before is not None:
                read, write = prices[provider]
                cost = equivalents(provider, cached, before, read, write)
                tallies[provider].add(total, unchanged, cost, plain.prefix.total_length // BYTES_PER_TOKEN)
            previous[provider] = cached
        agent_turn(session, turn)
    return tallies


def main(turns: int) -> list[str]:
    verdicts = []
    for provider, tally in replay(turns).items():
        share = tally.unchanged / tally.total
        read, write = rates(provider)
        print(
            f"{provider:9} {TARGETS[provider]:18} {tally.turns} turns measured: unchanged prefix {share:.1%} of "
            f"{tally.total / tally.turns:,.0f} input tokens a turn; input per turn "
            f"{tally.cached / tally.turns:,.0f} token-equivalents with the cache (read x{read:.2f}, write "
            f"x{write:.2f}), {tally.uncached / tally.turns:,.0f} with no cache ({tally.cached / tally.uncached:.0%}); "
            f"lowest turn {tally.lowest:.1%}; after the prune and the compaction "
            f"{', '.join(f'{share:.1%}' for share in tally.broken)}",
            flush=True,
        )
        met = share >= 0.95
        line = f"caching, {provider}: unchanged prefix {share:.1%} (target >= 95%) {'MET' if met else 'NOT MET'}"
        verdicts.append(line)
    return verdicts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    for verdict_line in main(parser.parse_args().turns):
        print(verdict_line)
