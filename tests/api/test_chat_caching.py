"""POST /chat and prompt caching: breakpoints, the prefix a request shares with the previous one, what broke it,
the cache in the context report, and the catalog's output limit and prices."""

from typing import Any

import httpx
import pytest

from app.context.catalog import bundled_catalog
from tests.api.test_context import service
from tests.api.wire import append, assistant, new_session, tool_call, tool_result, user
from tests.providers.payload_check import problems

pytestmark = pytest.mark.db

SONNET = "claude-sonnet-4-5"
SYSTEM = "You are a careful engineer. " + "Follow the house rules. " * 300
TOOLS = [{"name": "bash", "description": "Run a command", "inputSchema": {"type": "object"}}]


async def chat(client: httpx.AsyncClient, provider: str = "anthropic", **body: Any) -> dict[str, Any]:
    request = {"sessionId": "s1", "provider": provider, "model": SONNET, "system": SYSTEM, "tools": TOOLS, **body}
    response = await client.post("/chat", json=request)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def turn(client: httpx.AsyncClient, n: int) -> None:
    """One agent turn: a prompt, a call with a long result, an answer with its usage."""
    await append(
        client,
        "s1",
        user(f"step {n}", id=f"u{n}"),
        tool_call(f"c{n}", "bash", id=f"a{n}", command="make"),
        tool_result(f"c{n}", "bash", f"output {n} " + "x" * 6000, id=f"t{n}"),
        assistant(f"done {n}", id=f"d{n}", provider="anthropic", model=SONNET),
    )


def marks(value: Any) -> int:
    """Cache marks in a payload: Anthropic's ``cache_control``, the AI SDK's ``providerOptions.anthropic``
    ``cacheControl`` (its provider reads ``cache_control`` there too)."""
    if isinstance(value, dict):
        found = any(key in value for key in ("cache_control", "cacheControl"))
        return found + sum(marks(item) for item in value.values())
    if isinstance(value, list):
        return sum(marks(item) for item in value)
    return 0


async def test_a_second_turn_starts_with_the_first_turns_prefix_and_marks_it_for_the_cache(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    await turn(client, 1)
    first = await chat(client)
    assert first["diagnostics"]["prefixBreak"] is None
    assert first["context"]["cache"]["nextRequest"]["unchangedPrefixTokens"] is None
    payload = first["payload"]
    # The tools alone are below Claude's 1,024-token minimum: no breakpoint there; with the system, above it.
    assert "cache_control" not in payload["tools"][-1]
    assert payload["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert 0 < marks(payload) <= 4
    assert problems("anthropic", payload, model=SONNET) == []
    await turn(client, 2)
    second = await chat(client)
    assert second["diagnostics"]["prefixBreak"] is None
    upcoming = second["context"]["cache"]["nextRequest"]
    assert upcoming["unchangedPrefixTokens"] > 0.5 * upcoming["promptTokens"]
    assert upcoming["cachedPrefixTokens"] == upcoming["unchangedPrefixTokens"]
    assert "history" in upcoming["breakpoints"]
    assert marks(second["payload"]) <= 4


async def step(client: httpx.AsyncClient, n: int) -> None:
    """One agent step: a call and its long result, which the next request answers."""
    await append(
        client,
        "s1",
        tool_call(f"c{n}", "bash", id=f"a{n}", command="make"),
        tool_result(f"c{n}", "bash", f"output {n} " + "x" * 6000, id=f"t{n}"),
    )


@pytest.mark.parametrize(("provider", "model"), [("anthropic", SONNET), ("openai", "gpt-5")])
async def test_the_next_step_is_told_the_cache_serves_all_the_last_request_sent(
    client: httpx.AsyncClient, provider: str, model: str
) -> None:
    await new_session(client)
    await append(client, "s1", user("fix the build", id="u1"))
    await step(client, 1)
    first = await chat(client, provider, model=model)
    if provider == "anthropic":  # the request's end is marked: its last result is written to the cache
        assert first["payload"]["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    sent = first["context"]["cache"]["nextRequest"]["promptTokens"]
    await step(client, 2)
    upcoming = (await chat(client, provider, model=model))["context"]["cache"]["nextRequest"]
    assert upcoming["unchangedPrefixTokens"] == upcoming["cachedPrefixTokens"]
    assert sent * 0.95 <= upcoming["cachedPrefixTokens"] < upcoming["promptTokens"]


async def test_a_message_merged_into_the_last_requests_end_leaves_its_settled_prefix_served(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    await append(client, "s1", user("fix the build", id="u1"))
    await step(client, 1)
    sent = (await chat(client))["context"]["cache"]["nextRequest"]["promptTokens"]
    await append(client, "s1", user("and the tests", id="u2"))
    second = await chat(client)
    upcoming = second["context"]["cache"]["nextRequest"]
    assert second["diagnostics"]["prefixBreak"] is None
    assert 0 < upcoming["cachedPrefixTokens"] < sent * 0.8


async def test_cache_none_places_no_breakpoint(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await turn(client, 1)
    body = await chat(client, cache="none")
    assert marks(body["payload"]) == 0 and isinstance(body["payload"]["system"], str)
    assert body["context"]["cache"]["nextRequest"]["breakpoints"] == []


async def test_an_hour_ttl_is_written_on_every_breakpoint(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await turn(client, 1)
    payload = (await chat(client, cache={"ttl": "1h", "breakpoints": ["system"]}))["payload"]
    assert payload["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert marks(payload) == 1


STORED_MARK = {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
"""A cache mark as an AI SDK app writes it on a message's part, and may store it with the message."""


@pytest.mark.parametrize(("provider", "model"), [("anthropic", SONNET), ("ai-sdk", f"anthropic/{SONNET}")])
@pytest.mark.parametrize("cache", ["auto", {"ttl": "1h"}])
async def test_marks_stored_on_parts_are_not_sent_so_a_payload_holds_the_breakpoints_placed(
    client: httpx.AsyncClient, provider: str, model: str, cache: Any
) -> None:
    """The service places the marks: stored ones would pass Anthropic's four (the AI SDK drops those past
    the fourth, perhaps the service's own) and, beside 1-hour ones, put 5-minute marks before them."""
    await new_session(client)
    long = "lorem ipsum dolor sit amet " * 400
    stored = [{"type": "text", "text": f"question {n} {long}", "providerOptions": STORED_MARK} for n in range(3)]
    tool_output = {"type": "text", "value": "x", "providerOptions": {"anthropic": {"cache_control": {}}}}
    result = {"type": "tool-result", "toolCallId": "c1", "toolName": "bash", "output": tool_output}
    await append(
        client,
        "s1",
        {"role": "user", "content": [stored[0]]},
        tool_call("c1", "bash", command="ls"),
        {"role": "tool", "content": [{**result, "providerOptions": STORED_MARK}]},
        assistant("answer one", provider="anthropic", model=SONNET),
        {"role": "user", "content": [stored[1]]},
        assistant("answer two", provider="anthropic", model=SONNET),
        {"role": "user", "content": [stored[2]]},
    )
    body = await chat(client, provider, model=model, cache=cache)
    payload = body["payload"]
    placed = body["context"]["cache"]["nextRequest"]["breakpoints"]
    assert "history" in placed
    assert marks(payload) == len(placed)
    assert problems(provider, payload, model=model) == []


@pytest.mark.parametrize(
    ("provider", "cache", "field"),
    [
        ("anthropic", {"ttl": "10m"}, "cache.ttl"),
        ("anthropic", {"breakpoints": ["everything"]}, "cache.breakpoints"),
        ("anthropic", {"when": "always"}, "cache.when"),
        ("openai", {"breakpoints": ["history"]}, "cache.breakpoints"),
        ("anthropic", {"cachedContent": "cachedContents/x"}, "cache.cachedContent"),
    ],
)
async def test_a_cache_the_target_cannot_take_is_a_422_naming_the_field(
    client: httpx.AsyncClient, provider: str, cache: Any, field: str
) -> None:
    await new_session(client)
    await turn(client, 1)
    response = await client.post(
        "/chat", json={"sessionId": "s1", "provider": provider, "model": "gpt-5", "cache": cache}
    )
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field


async def test_a_cached_content_alone_is_taken_by_gemini(client: httpx.AsyncClient) -> None:
    """Gemini takes no breakpoints, so the default ones must not turn its one cache option into a 422."""
    await new_session(client)
    await turn(client, 1)
    body = {"sessionId": "s1", "provider": "gemini", "model": "gemini-2.5-pro"}
    response = await client.post("/chat", json={**body, "cache": {"cachedContent": "cachedContents/abc"}})
    assert response.status_code == 200, response.text
    assert response.json()["payload"]["cachedContent"] == "cachedContents/abc"
    assert response.json()["context"]["cache"]["nextRequest"]["breakpoints"] == []


@pytest.mark.parametrize(
    ("given", "field"),
    [({"system": "Be brief."}, "system"), ({"tools": TOOLS}, "tools"), ({"system": "Hi", "tools": TOOLS}, "system")],
)
async def test_a_system_or_tools_asked_beside_a_cached_content_is_a_422_naming_them(
    client: httpx.AsyncClient, given: dict[str, Any], field: str
) -> None:
    """The cached content holds the system instruction and tools it was created with: asking for others in the
    same request contradicts it, and Gemini refuses the two together."""
    await new_session(client)
    await turn(client, 1)
    body = {"sessionId": "s1", "provider": "gemini", "model": "gemini-2.5-pro", **given}
    response = await client.post("/chat", json={**body, "cache": {"cachedContent": "cachedContents/abc"}})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field
    assert all(name in response.json()["detail"] for name in given)


async def test_a_runs_system_and_tools_are_left_to_a_cached_content(client: httpx.AsyncClient) -> None:
    """What the request did not ask for itself (the run's system prompt and tools, a system note opening the
    history) is left out beside a cached content, said so in a repair."""
    await new_session(client)
    run = {"id": "r1", "model": "google/gemini-2.5-pro", "system": "Run prompt.", "tools": TOOLS}
    assert (await client.post("/sessions/s1/runs", json=run)).status_code == 201
    await turn(client, 1)
    body = {"sessionId": "s1", "runId": "r1", "provider": "gemini", "cache": {"cachedContent": "cachedContents/abc"}}
    response = await client.post("/chat", json=body)
    assert response.status_code == 200, response.text
    payload = response.json()["payload"]
    assert payload["cachedContent"] == "cachedContents/abc"
    assert "systemInstruction" not in payload and "tools" not in payload
    assert problems("gemini", payload, model="gemini-2.5-pro") == []
    rules = [repair["rule"] for repair in response.json()["diagnostics"]["repairs"]]
    assert "left-to-cached-content" in rules


async def test_a_prune_breaks_the_prefix_and_says_so(client: httpx.AsyncClient) -> None:
    await new_session(client)
    for n in range(8):
        await turn(client, n)
    await chat(client)
    pruned = await client.post(
        "/sessions/s1/prune", json={"protectUserTurns": 1, "protectToolTokens": 0, "minimumSavingsTokens": 0}
    )
    assert pruned.status_code == 200, pruned.text
    assert pruned.json()["cacheInvalidatedTokens"] > 0
    broke = (await chat(client))["diagnostics"]["prefixBreak"]
    assert broke is not None and broke["reason"] == "prune"
    assert (await chat(client))["diagnostics"]["prefixBreak"] is None


async def test_a_compaction_breaks_the_prefix_and_says_so(client: httpx.AsyncClient) -> None:
    await new_session(client)
    for n in range(3):
        await turn(client, n)
    await chat(client)
    compacted = await client.post("/sessions/s1/compactions", json={"summary": "We ran make three times."})
    assert compacted.status_code == 201, compacted.text
    assert compacted.json()["compaction"]["cacheInvalidatedTokens"] > 0
    await turn(client, 3)
    broke = (await chat(client))["diagnostics"]["prefixBreak"]
    assert broke is not None and broke["reason"] == "compaction"


async def test_an_amendment_that_changes_the_view_breaks_the_prefix_and_says_so(client: httpx.AsyncClient) -> None:
    await new_session(client)
    for n in range(3):
        await turn(client, n)
    await chat(client)
    hidden = await client.patch("/sessions/s1/messages/u1", json={"metadata": {"eligibleForModelContext": False}})
    assert hidden.status_code == 200, hidden.text
    broke = (await chat(client))["diagnostics"]["prefixBreak"]
    assert broke is not None and broke["reason"] == "amendment"


async def test_appending_never_breaks_the_prefix_for_any_target(client: httpx.AsyncClient) -> None:
    models = {
        "openai": "gpt-5",
        "openai-responses": "gpt-5",
        "gemini": "gemini-2.5-pro",
        "ai-sdk": "anthropic/" + SONNET,
    }
    await new_session(client)
    for n in range(4):
        await turn(client, n)
        for provider, model in models.items():
            body = await chat(client, provider, model=model)
            assert body["diagnostics"]["prefixBreak"] is None, provider


async def test_max_output_tokens_defaults_to_the_catalogs_output_limit(client: httpx.AsyncClient) -> None:
    limit = bundled_catalog().lookup("anthropic", SONNET).max_output_tokens  # type: ignore[union-attr]
    assert limit is not None and limit > 4096
    await new_session(client)
    await turn(client, 1)
    body = await chat(client)
    assert body["payload"]["max_tokens"] == limit
    assert body["context"]["maxOutputTokens"] == limit
    assert body["context"]["cache"]["nextRequest"]["maxOutputTokens"] == limit
    asked = await chat(client, maxOutputTokens=1000)
    assert asked["payload"]["max_tokens"] == 1000
    report = (await client.get("/sessions/s1/context", params={"model": SONNET, "provider": "anthropic"})).json()
    assert report["maxOutputTokens"] == limit
    window = report["window"]["tokens"]
    assert report["thresholdTokens"] <= window - min(limit, window // 2)


async def test_the_context_report_prices_the_next_request_with_its_cached_prefix(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await turn(client, 1)
    first = (await chat(client))["context"]["cache"]["nextRequest"]["expectedCostUsd"]
    await turn(client, 2)
    second = (await chat(client))["context"]["cache"]["nextRequest"]
    cost = second["expectedCostUsd"]
    assert first is not None and cost is not None
    assert cost["cacheRead"] > 0 and first["cacheRead"] == 0
    unknown = await client.post("/chat", json={"sessionId": "s1", "provider": "openai", "model": "my-local-model"})
    assert unknown.json()["context"]["cache"]["nextRequest"]["expectedCostUsd"] is None


async def test_an_hour_ttl_prices_the_next_requests_cache_writes_at_the_one_hour_rate(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    await turn(client, 1)
    five = (await chat(client))["context"]["cache"]["nextRequest"]["expectedCostUsd"]["cacheWrite"]
    hour = (await chat(client, cache={"ttl": "1h"}))["context"]["cache"]["nextRequest"]["expectedCostUsd"]["cacheWrite"]
    assert hour == pytest.approx(five * 6.00 / 3.75)


async def test_the_context_report_gives_the_cache_the_last_call_read(client: httpx.AsyncClient) -> None:
    await new_session(client)
    usage = {"inputTokens": 200, "cacheReadTokens": 1600, "cacheWriteTokens": 200, "outputTokens": 40}
    await append(client, "s1", user("hi"), assistant("hello", provider="anthropic", model=SONNET, usage=usage))
    report = (await client.get("/sessions/s1/context")).json()
    assert report["cache"]["lastCall"]["cacheReadTokens"] == 1600
    assert report["cache"]["lastCall"]["cachedShare"] == 0.8


async def test_openai_gets_a_prompt_cache_key_nobody_can_derive_from_the_session_id(database_url: str) -> None:
    async with service(database_url, cache_key_secret="server-secret") as client:
        await new_session(client)
        await turn(client, 1)
        keys = set()
        for provider in ("openai", "openai-responses"):
            payload = (await chat(client, provider, model="gpt-5"))["payload"]
            assert problems(provider, payload) == []
            keys.add(payload["prompt_cache_key"])
        [key] = keys
        assert "s1" not in key and len(key) > 20
        assert "prompt_cache_key" not in (await chat(client, "openai", model="gpt-5", cache="none"))["payload"]


async def test_appends_are_no_amendment_when_the_payload_changes_for_another_reason(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    await append(client, "s1", user("fix it " * 400, id="u1"))
    asked = {"sessionId": "s1", "provider": "anthropic", "model": SONNET}
    assert (await client.post("/chat", json=asked)).status_code == 200
    await step(client, 1)  # calls in the history and no tools asked: a placeholder tool joins the payload
    broke = (await client.post("/chat", json=asked)).json()["diagnostics"]["prefixBreak"]
    assert broke is not None and broke["reason"] == "unknown" and "placeholder tool" in broke["detail"]


async def test_a_prefix_too_short_to_have_been_cached_is_not_reported_served(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("fix the build", id="u1"))
    asked = {"sessionId": "s1", "provider": "anthropic", "model": SONNET, "tools": TOOLS}
    first = (await client.post("/chat", json=asked)).json()
    assert first["context"]["cache"]["nextRequest"]["breakpoints"] == []  # below Claude's 1,024-token minimum
    await step(client, 1)
    upcoming = (await client.post("/chat", json=asked)).json()["context"]["cache"]["nextRequest"]
    assert upcoming["unchangedPrefixTokens"] > 0 and upcoming["cachedPrefixTokens"] == 0
    assert upcoming["expectedCostUsd"]["cacheRead"] == 0
