"""Context accounting, compaction and pruning over real HTTP, with a model server on a loopback port."""

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.context import summarizer as summarizer_module
from app.main import create_app
from app.services import compaction
from tests.api.wire import append, assistant, new_session, tool_call, tool_result, user
from tests.conftest import settings_for_tests
from tests.context.fake_model_server import FakeModelServer, unused_base_url


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    with FakeModelServer(models={"qwen3": 32_768}) as server:
        yield server


@asynccontextmanager
async def service(database_url: str, **settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings_for_tests(model_server_timeout_seconds=0.5, **settings), database_url=database_url)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        try:
            yield client
        finally:
            for listed in (await client.get("/sessions", params={"limit": 500})).json()["sessions"]:
                await client.delete(f"/sessions/{listed['id']}")


def servers(base_url: str) -> dict[str, Any]:
    return {"model_servers_by_provider": {"vllm": {"baseUrl": base_url}}}


async def context(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/sessions/s1/context", params=params)
    assert response.status_code == 200, response.text
    report: dict[str, Any] = response.json()
    return report


# Window resolution ----------------------------------------------------------------------------------------


async def test_window_comes_from_the_model_server_first(database_url: str, model_server: FakeModelServer) -> None:
    async with service(database_url, **servers(model_server.base_url), context_windows={"qwen3": 8000}) as client:
        await new_session(client, contextWindowTokens=4000)
        report = await context(client, provider="vllm", model="qwen3")
    assert report["window"]["tokens"] == 32_768
    assert report["window"]["source"] == "model_server"


async def test_an_unreachable_server_falls_to_the_configured_window(database_url: str) -> None:
    async with service(database_url, **servers(unused_base_url()), context_windows={"vllm/qwen3": 8000}) as client:
        await new_session(client, contextWindowTokens=4000)
        report = await context(client, provider="vllm", model="qwen3")
    assert report["window"] == {"tokens": 8000, "source": "model_config", "notes": report["window"]["notes"]}
    assert report["window"]["notes"]


@pytest.mark.parametrize("fault", ["hang", "garbage", "fail"])
async def test_a_slow_or_broken_server_falls_to_the_session_window(
    database_url: str, model_server: FakeModelServer, fault: str
) -> None:
    getattr(model_server, fault)("/v1/models")
    async with service(database_url, **servers(model_server.base_url)) as client:
        await new_session(client, contextWindowTokens=4000)
        report = await asyncio.wait_for(context(client, provider="vllm", model="qwen3"), timeout=5)
    model_server.release()
    assert report["window"]["tokens"] == 4000
    assert report["window"]["source"] == "session"


async def test_with_no_window_compaction_is_never_due(database_url: str) -> None:
    async with service(database_url) as client:
        await new_session(client)
        await append(client, "s1", user("x" * 400_000))
        report = await context(client, model="anything")
    assert report["window"]["source"] == "none"
    assert report["compactionDue"] is False


async def test_a_claude_code_sessions_model_gets_the_catalogs_window_with_no_configuration(database_url: str) -> None:
    async with service(database_url) as client:
        await new_session(client, model="anthropic/claude-sonnet-4-5-20250929")
        report = await context(client)
    assert report["window"] == {"tokens": 200_000, "source": "catalog", "notes": []}


async def test_the_sessions_model_is_counted_when_the_request_names_none(database_url: str) -> None:
    async with service(database_url, context_windows={"anthropic/claude-sonnet-4-5": 200_000}) as client:
        await new_session(client, model="anthropic/claude-sonnet-4-5")
        report = await context(client)
    assert report["model"] == "claude-sonnet-4-5"
    assert report["window"]["tokens"] == 200_000


# Threshold edges ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("input_tokens", "due"), [(799, False), (800, True)])
async def test_compaction_is_due_from_the_threshold_on(database_url: str, input_tokens: int, due: bool) -> None:
    async with service(database_url) as client:
        await new_session(client, contextWindowTokens=1000)
        usage = {"inputTokens": input_tokens, "outputTokens": 0}
        await append(client, "s1", user("hi"), assistant("", model="m", usage=usage, finishReason="stop"))
        report = await context(client, model="m")
    assert report["thresholdTokens"] == 800
    assert report["basis"] == "usage"
    assert report["totalTokens"] == input_tokens
    assert report["compactionDue"] is due


async def test_usage_of_an_aborted_answer_is_not_trusted(database_url: str) -> None:
    async with service(database_url) as client:
        await new_session(client, contextWindowTokens=1000)
        usage = {"inputTokens": 900, "outputTokens": 0}
        await append(client, "s1", user("hi"), assistant("", model="m", usage=usage, finishReason="aborted"))
        report = await context(client, model="m")
    assert report["basis"] == "estimate"
    assert report["compactionDue"] is False


async def test_context_reports_tokens_per_section(database_url: str) -> None:
    async with service(database_url) as client:
        await new_session(client, contextWindowTokens=100_000)
        await append(
            client, "s1", user("question " * 50), tool_call("c1", "read"), tool_result("c1", "read", "o" * 4000)
        )
        report = await context(client, model="m")
    assert set(report["sections"]) == {"system", "summary", "messages", "toolResults", "reasoning"}
    assert report["sections"]["toolResults"] >= 1000
    assert report["sections"]["messages"] > 0


# Compaction -----------------------------------------------------------------------------------------------


async def seed_history(client: httpx.AsyncClient, turns: int = 6) -> None:
    await new_session(client, contextWindowTokens=100_000)
    for turn in range(turns):
        await append(
            client,
            "s1",
            user(f"step {turn}", id=f"u{turn}"),
            tool_call(f"c{turn}", "read", id=f"call{turn}"),
            tool_result(f"c{turn}", "read", "r" * 200, id=f"result{turn}"),
            assistant(f"done {turn}", id=f"a{turn}"),
        )


async def test_compaction_with_a_caller_summary_changes_the_model_view(database_url: str) -> None:
    async with service(database_url) as client:
        await seed_history(client)
        response = await client.post(
            "/sessions/s1/compactions", json={"summary": "We read six files.", "throughMessageId": "a3"}
        )
        assert response.status_code == 201, response.text
        written = response.json()
        assert written["boundary"]["kind"] == "compact_boundary"
        assert written["summary"]["kind"] == "compact_summary"
        assert written["summary"]["metadata"]["summaryForBoundaryId"] == written["boundary"]["id"]
        assert written["boundary"]["metadata"]["compactThroughMessageId"] == "a3"
        view = (await client.get("/sessions/s1/projection", params={"view": "model"})).json()
        sources = [source for message in view["messages"] for source in message["sourceMessageIds"]]
        assert sources[0] == written["summary"]["id"]
        assert "We read six files." in str(view["messages"][0]["content"])
        assert sources[1:] == ["u4", "call4", "result4", "a4", "u5", "call5", "result5", "a5"]
        assert (await context(client, model="m"))["appliedCompactBoundaryId"] == written["boundary"]["id"]
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 26


async def test_a_retried_compaction_that_landed_answers_200_with_what_was_stored_and_writes_nothing(
    database_url: str,
) -> None:
    ask = {"summary": "We read six files.", "throughMessageId": "a3", "boundaryId": "b1", "summaryId": "s1"}
    async with service(database_url) as client:
        await seed_history(client)
        first = await client.post("/sessions/s1/compactions", json=ask)
        # The runtime's connection dropped before the answer came: it sends the same request again.
        retried = await client.post("/sessions/s1/compactions", json=ask)
        other_summary = await client.post("/sessions/s1/compactions", json={**ask, "summary": "Another one."})
        stored = (await client.get("/sessions/s1")).json()
    assert first.status_code == 201, first.text
    assert retried.status_code == 200, retried.text
    assert retried.json() == first.json()
    assert other_summary.status_code != 200
    assert stored["messageCount"] == 26


async def test_a_compaction_through_another_message_under_stored_ids_is_a_conflict_not_a_replay(
    database_url: str,
) -> None:
    """The ids name a compaction through ``a3``: one asked through ``a4`` is another compaction, which did not
    land, and must not be answered as if it had."""
    ask = {"summary": "We read six files.", "throughMessageId": "a3", "boundaryId": "b1", "summaryId": "s1"}
    async with service(database_url) as client:
        await seed_history(client)
        first = await client.post("/sessions/s1/compactions", json=ask)
        further = await client.post("/sessions/s1/compactions", json={**ask, "throughMessageId": "a4"})
    assert first.status_code == 201, first.text
    assert further.status_code == 409, further.text
    assert further.json()["field"] == "boundaryId"


async def test_a_compaction_naming_a_stored_boundary_with_a_new_summary_is_a_conflict_and_writes_nothing(
    database_url: str,
) -> None:
    """A boundary's text is always the same: its id stored already must not be taken for this compaction's,
    which would write a summary of the history through ``a4`` for the boundary through ``a3``."""
    ask = {"summary": "We read six files.", "throughMessageId": "a3", "boundaryId": "b1", "summaryId": "s1"}
    async with service(database_url) as client:
        await seed_history(client)
        first = await client.post("/sessions/s1/compactions", json=ask)
        again = {"summary": "We read eight files.", "throughMessageId": "a4", "boundaryId": "b1", "summaryId": "s2"}
        reused = await client.post("/sessions/s1/compactions", json=again)
        stored = (await client.get("/sessions/s1")).json()
    assert first.status_code == 201, first.text
    assert reused.status_code == 409, reused.text
    assert reused.json()["field"] == "boundaryId"
    assert stored["messageCount"] == 26


@pytest.mark.parametrize("through", ["a3", None], ids=["caller's cut", "policy's cut"])
async def test_a_retry_that_takes_the_lease_its_first_try_let_go_of_answers_200_with_what_was_stored(
    database_url: str, monkeypatch: pytest.MonkeyPatch, through: str | None
) -> None:
    """The first try wrote and ended its lease between the retry's first look for it and the retry's lease."""
    looked = compaction._stored_compaction
    hidden: list[bool] = []

    async def before_the_first_try_landed(*args: Any) -> Any:
        """The retry's first look finds nothing."""
        return None if hidden and not hidden.pop() else await looked(*args)

    monkeypatch.setattr(compaction, "_stored_compaction", before_the_first_try_landed)
    ask = {"summary": "We read six files.", "throughMessageId": through, "boundaryId": "b1", "summaryId": "s1"}
    async with service(database_url) as client:
        await seed_history(client)
        first = await client.post("/sessions/s1/compactions", json=ask)
        hidden.append(False)
        retried = await client.post("/sessions/s1/compactions", json=ask)
        again = await client.post("/sessions/s1/compactions", json={"summary": "Later."})
    assert first.status_code == 201, first.text
    assert retried.status_code == 200, retried.text
    assert retried.json() == first.json()
    assert again.status_code == 201, again.text  # the retry's lease was let go of


async def test_a_retried_compaction_the_summarizer_wrote_answers_200_without_asking_it_again(
    database_url: str, model_server: FakeModelServer
) -> None:
    settings = {"summarizer_base_url": model_server.base_url, "summarizer_model": "summarizer"}
    async with service(database_url, **settings) as client:
        await seed_history(client)
        first = await client.post("/sessions/s1/compactions", json={"boundaryId": "b1", "summaryId": "s1"})
        model_server.answer_chat("## Goal\nA different summary of the same history.")
        retried = await client.post("/sessions/s1/compactions", json={"boundaryId": "b1", "summaryId": "s1"})
        stored = (await client.get("/sessions/s1")).json()
    assert first.status_code == 201, first.text
    assert retried.status_code == 200, retried.text
    assert retried.json()["summary"] == first.json()["summary"]
    assert len(model_server.requests_to("/v1/chat/completions")) == 1
    assert stored["messageCount"] == 26


async def test_the_summarizer_writes_the_summary_from_the_compact_view(
    database_url: str, model_server: FakeModelServer
) -> None:
    model_server.answer_chat("## Goal\nRead the files.\n## Progress\nSix read.")
    settings = {"summarizer_base_url": model_server.base_url, "summarizer_model": "summarizer"}
    async with service(database_url, **settings) as client:
        await seed_history(client)
        first = await client.post("/sessions/s1/compactions", json={})
        assert first.status_code == 201, first.text
        assert "Six read." in first.json()["summary"]["content"]
        await append(client, "s1", user("more work", id="later"))
        second = await client.post("/sessions/s1/compactions", json={})
        assert second.status_code == 201, second.text
    sent = [request.json() for request in model_server.requests_to("/v1/chat/completions")]
    assert len(sent) == 2
    prompt = str(sent[0]["messages"])
    assert "step 0" in prompt
    assert "Six read." in str(sent[1]["messages"])


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"summary": "   "}, 422, "summary"),
        ({"summary": "S", "throughMessageId": "call2"}, 422, "throughMessageId"),
        ({"summary": "S", "throughMessageId": "ghost"}, 422, "throughMessageId"),
        ({}, 422, "summary"),
        ({"summary": "S", "boundaryId": "same", "summaryId": "same"}, 422, "summaryId"),
        ({"summary": "S", "boundaryId": "u1"}, 409, "boundaryId"),
        ({"summary": "S", "summaryId": "u1"}, 409, "summaryId"),
    ],
)
async def test_refused_compactions_write_nothing(
    database_url: str, body: dict[str, Any], status: int, field: str
) -> None:
    async with service(database_url) as client:
        await seed_history(client, turns=2)
        response = await client.post("/sessions/s1/compactions", json=body)
        assert response.status_code == status, response.text
        assert response.json()["field"] == field
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 8


async def test_a_summary_past_the_message_size_limit_is_413_naming_the_summary(database_url: str) -> None:
    async with service(database_url, max_message_bytes=4_000) as client:
        await seed_history(client, turns=2)
        response = await client.post("/sessions/s1/compactions", json={"summary": "s" * 5_000})
        assert response.status_code == 413, response.text
        assert response.json()["field"] == "summary"
        assert response.json()["detail"].startswith("summary")
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 8


async def compact_six_long_turns(client: httpx.AsyncClient) -> httpx.Response:
    """Six turns of 8,000-character prompts, compacted through the last: more than a 12,000-token summarizer
    takes in one request."""
    await new_session(client, contextWindowTokens=200_000)
    for turn in range(6):
        await append(client, "s1", user(f"step {turn} " + "w" * 8_000, id=f"u{turn}"), assistant(f"a{turn}"))
    return await client.post("/sessions/s1/compactions", json={"throughMessageId": "u5"})


async def test_a_history_past_the_summarizers_window_is_summarized_in_parts(
    database_url: str, model_server: FakeModelServer
) -> None:
    model_server.serve_models({"summarizer": 12_000})
    model_server.answer_chat("## Goal\nRead the files.\n## Progress\nSix read.")
    settings = {"summarizer_base_url": model_server.base_url, "summarizer_model": "summarizer"}
    async with service(database_url, **settings) as client:
        response = await compact_six_long_turns(client)
        assert response.status_code == 201, response.text
        record = response.json()["boundary"]["metadata"]["compaction"]
    prompts = [str(request.json()["messages"]) for request in model_server.requests_to("/v1/chat/completions")]
    assert record["summarizerCalls"] == len(prompts) > 1
    assert [n for prompt in prompts for n in range(6) if f"step {n} " in prompt] == list(range(6))
    assert all("Six read." in prompt for prompt in prompts[1:])


async def test_a_history_needing_more_summarizer_parts_than_allowed_is_502_before_any_request(
    database_url: str, model_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(summarizer_module, "MAX_SUMMARY_PARTS", 2)
    model_server.serve_models({"summarizer": 12_000})
    settings = {"summarizer_base_url": model_server.base_url, "summarizer_model": "summarizer"}
    async with service(database_url, **settings) as client:
        response = await compact_six_long_turns(client)
        assert response.status_code == 502, response.text
        assert response.json()["reason"] == "too_many_parts"
        assert "throughMessageId" in response.json()["detail"]
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 12
    assert model_server.requests_to("/v1/chat/completions") == []


async def test_a_summarizer_window_too_small_for_its_answer_is_502_and_writes_nothing(
    database_url: str, model_server: FakeModelServer
) -> None:
    settings = {
        "summarizer_base_url": model_server.base_url,
        "summarizer_model": "summarizer",
        "summarizer_context_window_tokens": 4_096,
    }
    async with service(database_url, **settings) as client:
        await seed_history(client, turns=2)
        response = await client.post("/sessions/s1/compactions", json={})
        assert response.status_code == 502, response.text
        assert response.json()["reason"] == "window_too_small"
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 8
    assert model_server.requests_to("/v1/chat/completions") == []


@pytest.mark.parametrize("fault", ["fail", "garbage", "empty"])
async def test_a_summarizer_failure_is_502_and_writes_nothing(
    database_url: str, model_server: FakeModelServer, fault: str
) -> None:
    if fault == "empty":
        model_server.answer_chat("   ")
    else:
        getattr(model_server, fault)("/v1/chat/completions")
    settings = {"summarizer_base_url": model_server.base_url, "summarizer_model": "summarizer"}
    async with service(database_url, **settings) as client:
        await seed_history(client, turns=2)
        response = await client.post("/sessions/s1/compactions", json={})
        assert response.status_code == 502, response.text
        assert response.json()["type"].endswith("/summarizer-failed")
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 8


def wait_for_request(server: FakeModelServer, path: str, timeout: float = 5.0) -> None:
    """The fake server runs in a thread, so this waits in one too."""
    deadline = time.monotonic() + timeout
    while not server.requests_to(path):
        assert time.monotonic() < deadline, f"no request to {path}"
        time.sleep(0.01)


async def test_a_second_compaction_while_one_runs_is_409(database_url: str, model_server: FakeModelServer) -> None:
    model_server.hang("/v1/chat/completions")
    settings = {"summarizer_base_url": model_server.base_url, "summarizer_model": "summarizer"}
    async with service(database_url, **settings) as client:
        await seed_history(client, turns=2)
        running = asyncio.create_task(client.post("/sessions/s1/compactions", json={}))
        await asyncio.to_thread(wait_for_request, model_server, "/v1/chat/completions")
        second = await client.post("/sessions/s1/compactions", json={"summary": "mine"})
        assert second.status_code == 409
        assert second.json()["type"].endswith("/compaction-running")
        model_server.answer_chat("## Goal\nDone.")
        model_server.release()
        first = await running
        assert first.status_code in (201, 502)


async def test_compacting_an_unknown_session_is_404(database_url: str) -> None:
    async with service(database_url) as client:
        response = await client.post("/sessions/nope/compactions", json={"summary": "x"})
    assert response.status_code == 404


# Pruning --------------------------------------------------------------------------------------------------


async def big_tool_history(client: httpx.AsyncClient, turns: int, output_chars: int, tool: str = "read") -> None:
    await new_session(client)
    for turn in range(turns):
        await append(
            client,
            "s1",
            user(f"turn {turn}", id=f"u{turn}"),
            tool_call(f"c{turn}", tool, id=f"call{turn}"),
            tool_result(f"c{turn}", tool, "x" * output_chars, id=f"r{turn}"),
        )


async def test_prune_marks_old_results_outside_the_protected_window(database_url: str) -> None:
    async with service(database_url) as client:
        await big_tool_history(client, turns=8, output_chars=80_000)
        before = (await context(client, model="m"))["totalTokens"]
        response = await client.post("/sessions/s1/prune", json={})
        assert response.status_code == 200, response.text
        result = response.json()
        assert result["prunedMessageIds"] and result["tokensSaved"] >= 20_000
        assert result["markedMessageIds"] == result["prunedMessageIds"]
        assert "r7" not in result["prunedMessageIds"] and "r6" not in result["prunedMessageIds"]
        pruned = (await client.get(f"/sessions/s1/messages/{result['prunedMessageIds'][0]}")).json()
        assert "compactedAt" in pruned["metadata"]
        assert pruned["content"][0]["output"]["value"] == "x" * 80_000
        assert (await context(client, model="m"))["totalTokens"] < before
        again = (await client.post("/sessions/s1/prune", json={})).json()
        assert again["prunedMessageIds"] == []


async def test_prune_does_nothing_below_the_minimum_saving(database_url: str) -> None:
    async with service(database_url) as client:
        await big_tool_history(client, turns=4, output_chars=4_000)
        result = (await client.post("/sessions/s1/prune", json={})).json()
    assert result["prunedMessageIds"] == []
    assert result["tokensSaved"] == 0


async def test_prune_never_touches_protected_tools(database_url: str) -> None:
    async with service(database_url, prune_protected_tools=["skill"]) as client:
        await big_tool_history(client, turns=8, output_chars=80_000, tool="skill")
        result = (await client.post("/sessions/s1/prune", json={})).json()
    assert result["prunedMessageIds"] == []


async def test_a_dry_run_reports_without_marking(database_url: str) -> None:
    async with service(database_url) as client:
        await big_tool_history(client, turns=8, output_chars=80_000)
        result = (await client.post("/sessions/s1/prune", json={"dryRun": True})).json()
        assert result["prunedMessageIds"] and result["markedMessageIds"] == []
        stored = (await client.get(f"/sessions/s1/messages/{result['prunedMessageIds'][0]}")).json()
    assert "compactedAt" not in stored["metadata"]


async def test_prune_thresholds_can_be_set_per_request(database_url: str) -> None:
    async with service(database_url) as client:
        await big_tool_history(client, turns=4, output_chars=4_000)
        result = (
            await client.post(
                "/sessions/s1/prune", json={"minimumSavingsTokens": 0, "protectToolTokens": 0, "protectUserTurns": 1}
            )
        ).json()
    assert result["prunedMessageIds"] == ["r0", "r1", "r2"]
