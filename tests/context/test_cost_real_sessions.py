"""Real sessions priced by the catalog: a Claude Code session against a hand computation from the published
prices, and pi's sessions against the cost pi recorded on every response (pi prices from its own catalog).

The files are real agent sessions kept outside the repository; the tests skip when they are absent.
"""

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from app.context.catalog import bundled_catalog
from app.context.cost import UsageRecord, session_cost, usage_record

REALDATA = next(
    (folder / "shared" / "realdata" for folder in Path(__file__).resolve().parents if (folder / "shared").is_dir()),
    Path("/nonexistent"),
)
"""The ``shared/realdata`` folder beside the checkout (or beside a folder holding it, for a git worktree)."""
GOLFGOD = REALDATA / "claude-code" / "ThomasJMcGovern--Golfgod_v1--c2f506b9--chat.json"
PI_SESSIONS = sorted((REALDATA / "pi").glob("*.jsonl"))

PUBLISHED_PRICES = {
    "claude-sonnet-4-5-20250929": (Decimal(3), Decimal(15), Decimal("0.30"), Decimal("3.75")),
    "claude-haiku-4-5-20251001": (Decimal(1), Decimal(5), Decimal("0.10"), Decimal("1.25")),
}
"""Anthropic's list prices in US dollars per million tokens: input, output, cache read, cache write (at the
five-minute rate, which is what this session's ``cache_creation.ephemeral_5m_input_tokens`` says it used)."""


def claude_code_responses(path: Path) -> dict[str, dict[str, Any]]:
    """One entry per response: Claude Code writes a line per content block, all with the response's
    ``message.id`` and a usage whose output count grows as the answer streams, so the last line holds it."""
    responses: dict[str, dict[str, Any]] = {}
    for entry in json.loads(path.read_text()):
        message = entry.get("message") if entry.get("type") == "assistant" else None
        if isinstance(message, dict) and message.get("usage"):
            responses[message["id"]] = entry
    return responses


def claude_code_record(message_id: str, entry: dict[str, Any]) -> UsageRecord | None:
    """The response as a store holds it: Anthropic's counts already keep cache reads and writes apart."""
    usage = entry["message"]["usage"]
    metadata = {
        "provider": "anthropic",
        "model": entry["message"]["model"],
        "usage": {
            "inputTokens": usage["input_tokens"],
            "outputTokens": usage["output_tokens"],
            "cacheReadTokens": usage["cache_read_input_tokens"],
            "cacheWriteTokens": usage["cache_creation_input_tokens"],
        },
    }
    return usage_record(message_id, None, datetime.fromisoformat(entry["timestamp"]), metadata, {})


@pytest.mark.skipif(not GOLFGOD.is_file(), reason="the real Claude Code sessions are not on this machine")
def test_a_claude_code_session_costs_what_the_published_prices_say() -> None:
    responses = claude_code_responses(GOLFGOD)
    records = [record for message_id, entry in responses.items() if (record := claude_code_record(message_id, entry))]
    by_hand = Decimal(0)
    for record in records:
        assert record.usage.prompt <= 200_000, "above 200k Sonnet 4.5 has a long-context price: not by hand here"
        input_price, output_price, read_price, write_price = PUBLISHED_PRICES[record.model or ""]
        by_hand += (
            record.usage.input * input_price
            + record.usage.output * output_price
            + record.usage.cache_read * read_price
            + record.usage.cache_write * write_price
        ) / 1_000_000

    cost = session_cost(records, bundled_catalog()).session

    assert (len(records), cost.responses) == (151, 151)
    assert cost.cost is not None
    assert cost.cost.total == by_hand
    assert round(by_hand, 2) == Decimal("11.03")
    assert cost.cost.cache_read > 0 and cost.cost.cache_write > 0


def pi_entries(path: Path) -> Iterator[dict[str, Any]]:
    """Every JSON object of a pi session: one per line, except lines where a lost newline joined two."""
    decoder = json.JSONDecoder()
    for line in path.read_text().splitlines():
        position = 0
        while position < len(line):
            entry, position = decoder.raw_decode(line, position)
            yield entry


@pytest.mark.parametrize("path", PI_SESSIONS, ids=[path.name for path in PI_SESSIONS])
def test_every_pi_response_costs_what_pi_recorded(path: Path) -> None:
    catalog = bundled_catalog()
    priced = 0
    for entry in pi_entries(path):
        message = entry.get("message") or {}
        usage = message.get("usage")
        if message.get("role") != "assistant" or not usage:
            continue
        metadata = {
            "provider": message.get("provider"),
            "model": message.get("model"),
            "usage": {
                "inputTokens": usage["input"],
                "outputTokens": usage["output"],
                "cacheReadTokens": usage["cacheRead"],
                "cacheWriteTokens": usage["cacheWrite"],
            },
        }
        at = datetime.fromtimestamp(message["timestamp"] / 1000, tz=UTC)
        record = usage_record(entry.get("id", "m"), None, at, metadata, {})
        if record is None:
            continue
        cost = session_cost([record], catalog).session.cost
        assert cost is not None, message.get("model")
        assert float(cost.total) == pytest.approx(usage["cost"]["total"], abs=1e-9)
        assert float(cost.cache_write) == pytest.approx(usage["cost"]["cacheWrite"], abs=1e-9)
        priced += 1
    assert priced > 200
