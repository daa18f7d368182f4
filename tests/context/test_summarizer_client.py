"""The summariser client over real HTTP: a usable summary, or a specific error and nothing else."""

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.context.config import ModelServer, SummarizerConfig, Timeouts
from app.context.errors import SummarizerError
from app.context.summarizer import MAX_SUMMARY_PARTS, Summarizer
from app.context.summary_prompt import SYSTEM_PROMPT
from tests.context.fake_model_server import (
    CHAT_PATH,
    FakeModelServer,
    RecordedRequest,
    Reply,
    chat_completion,
    unused_base_url,
)

TINY = Timeouts(connect_seconds=0.2, read_seconds=0.05, total_seconds=0.1)
"""Only for held answers: anything real must not race these, so every other test uses ROOMY."""
ROOMY = Timeouts(connect_seconds=5.0, read_seconds=5.0, total_seconds=10.0)
GOOD = "## Goal\nFix login.\n\n## Next steps\n- run the tests"
CHAT = [{"role": "user", "content": "Why does login fail?"}]


def summarizer_for(base_url: str, **overrides: Any) -> Summarizer:
    """A summariser of the tests' configuration with ``overrides`` (``SummarizerConfig`` fields) replacing its
    values."""
    tested = SummarizerConfig(server=ModelServer(base_url, "sk-sum"), model="qwen-coder", timeouts=ROOMY)
    return Summarizer(dataclasses.replace(tested, **overrides))


@pytest.fixture
async def summarizer(model_server: FakeModelServer) -> AsyncIterator[Summarizer]:
    client = summarizer_for(model_server.base_url)
    yield client
    await client.aclose()


async def failure(summarizer: Summarizer) -> str:
    with pytest.raises(SummarizerError) as error:
        await summarizer.summarize(CHAT)
    return error.value.reason


async def test_good_answer_is_returned_cleaned(summarizer: Summarizer, model_server: FakeModelServer) -> None:
    model_server.answer_chat(f"<think>hmm</think>\n{GOOD}\n")
    result = await summarizer.summarize(CHAT, previous_summary="## Goal\nold")
    assert result.text == GOOD


async def test_request_is_a_plain_chat_completion_with_the_fixed_prompt(
    summarizer: Summarizer, model_server: FakeModelServer
) -> None:
    model_server.answer_chat(GOOD)
    await summarizer.summarize(CHAT, previous_summary="## Goal\nold", instructions="Keep it short.")
    (request,) = model_server.requests_to(CHAT_PATH)
    body = request.json()
    assert request.headers["authorization"] == "Bearer sk-sum"
    assert (body["model"], body["max_tokens"], body["temperature"], body["stream"]) == (
        "qwen-coder",
        8_192,
        0.0,
        False,
    )
    assert "tools" not in body
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    user = body["messages"][1]["content"]
    assert "<previous-summary>\n## Goal\nold\n</previous-summary>" in user
    assert "[User]: Why does login fail?" in user
    assert user.endswith("Keep it short.")


async def test_slow_summariser_is_a_timeout(model_server: FakeModelServer) -> None:
    model_server.hang(CHAT_PATH)
    client = summarizer_for(model_server.base_url, timeouts=TINY)
    try:
        assert await failure(client) == "timeout"
    finally:
        await client.aclose()


async def test_refused_connection_is_unreachable() -> None:
    client = summarizer_for(unused_base_url())
    try:
        assert await failure(client) == "unreachable"
    finally:
        await client.aclose()


async def test_malformed_base_url_is_unreachable() -> None:
    client = summarizer_for("http://gpu:port")
    try:
        assert await failure(client) == "unreachable"
    finally:
        await client.aclose()


async def test_error_status_is_reported(summarizer: Summarizer, model_server: FakeModelServer) -> None:
    model_server.fail(CHAT_PATH, 500)
    assert await failure(summarizer) == "http_status"


async def test_error_status_carries_what_the_server_said(summarizer: Summarizer, model_server: FakeModelServer) -> None:
    said = {"error": {"message": "This model's maximum context length is 32768 tokens."}}
    model_server.reply(CHAT_PATH, Reply(status=400, json=said))
    with pytest.raises(SummarizerError) as error:
        await summarizer.summarize(CHAT)
    assert "HTTP 400" in error.value.detail
    assert "maximum context length is 32768" in error.value.detail


async def test_garbage_is_a_bad_response(summarizer: Summarizer, model_server: FakeModelServer) -> None:
    model_server.garbage(CHAT_PATH)
    assert await failure(summarizer) == "bad_response"


async def test_json_without_choices_is_a_bad_response(summarizer: Summarizer, model_server: FakeModelServer) -> None:
    model_server.reply(CHAT_PATH, Reply(json={"choices": []}))
    assert await failure(summarizer) == "bad_response"


@pytest.mark.parametrize("text", [None, "", "   \n", "<think>only thinking</think>"])
async def test_empty_answer_is_refused(summarizer: Summarizer, model_server: FakeModelServer, text: str | None) -> None:
    model_server.answer_chat(text)
    assert await failure(summarizer) == "empty_summary"


async def test_answer_cut_at_the_token_limit_is_refused(summarizer: Summarizer, model_server: FakeModelServer) -> None:
    model_server.answer_chat(GOOD, finish_reason="length")
    assert await failure(summarizer) == "truncated"


async def test_content_filtered_answer_is_refused(summarizer: Summarizer, model_server: FakeModelServer) -> None:
    model_server.answer_chat(GOOD, finish_reason="content_filter")
    assert await failure(summarizer) == "bad_response"


async def test_an_answer_that_continues_the_task_is_refused(
    summarizer: Summarizer, model_server: FakeModelServer
) -> None:
    model_server.answer_chat("Sure, I'll now edit src/auth.ts and rerun the tests.")
    assert await failure(summarizer) == "off_template"


async def test_template_check_can_be_turned_off(model_server: FakeModelServer) -> None:
    model_server.answer_chat("A plain prose summary.")
    client = summarizer_for(model_server.base_url, require_template_headings=False)
    try:
        assert (await client.summarize(CHAT)).text == "A plain prose summary."
    finally:
        await client.aclose()


async def test_content_parts_in_the_answer_are_joined(summarizer: Summarizer, model_server: FakeModelServer) -> None:
    body = chat_completion(None)
    body["choices"][0]["message"]["content"] = [{"type": "text", "text": "## Goal\n"}, {"type": "text", "text": "x"}]
    model_server.reply(CHAT_PATH, Reply(json=body))
    assert (await summarizer.summarize("plain text history")).text == "## Goal\nx"


async def test_a_history_longer_than_the_window_is_summarized_in_parts_each_updating_the_last(
    model_server: FakeModelServer,
) -> None:
    model_server.answer_chat(GOOD)
    summarizer = summarizer_for(model_server.base_url, max_output_tokens=1_000)
    history = [{"role": "user", "content": f"step {n} " + "x" * 5_000} for n in range(8)]
    renewed: list[int] = []

    async def renew() -> None:
        renewed.append(len(model_server.requests_to(CHAT_PATH)))

    try:
        result = await summarizer.summarize(
            history, previous_summary="## Goal\nEarlier.", window_tokens=6_000, before_next_part=renew
        )
    finally:
        await summarizer.aclose()
    sent = [request.json()["messages"] for request in model_server.requests_to(CHAT_PATH)]
    assert result.text == GOOD and result.calls == len(sent) > 1
    assert renewed == list(range(1, len(sent)))
    assert all(len(str(messages).encode()) <= (6_000 - 1_000) * 3 for messages in sent)
    prompts = [messages[1]["content"] for messages in sent]
    assert "Earlier." in prompts[0] and all("Fix login." in prompt for prompt in prompts[1:])
    steps = [n for prompt in prompts for n in range(8) if f"step {n} " in prompt]
    assert steps == list(range(8))


def summary_near_its_limit(request: RecordedRequest) -> Reply:
    """A summary as long as the request's ``max_tokens`` allows, at four bytes a token: the longest a
    summariser may write without being cut."""
    text = GOOD + "\n- " + "x" * (request.json()["max_tokens"] * 4 - len(GOOD) - 200)
    return Reply(json=chat_completion(text))


async def test_summaries_near_their_token_limit_still_leave_each_next_part_room(
    model_server: FakeModelServer,
) -> None:
    model_server.reply_with(CHAT_PATH, summary_near_its_limit)
    summarizer = summarizer_for(model_server.base_url)
    history = [{"role": "user", "content": f"step {n} " + "x" * 5_000} for n in range(8)]
    try:
        result = await summarizer.summarize(history, window_tokens=12_000)
    finally:
        await summarizer.aclose()
    sent = [request.json() for request in model_server.requests_to(CHAT_PATH)]
    assert result.calls == len(sent) > 1
    assert all(body["max_tokens"] <= 12_000 // 4 for body in sent)
    assert all(len(str(body["messages"]).encode()) / 3 + body["max_tokens"] <= 12_000 for body in sent)
    steps = [n for body in sent for n in range(8) if f"step {n} " in str(body["messages"])]
    assert steps == list(range(8))


async def test_a_history_fitting_one_request_is_sent_with_the_configured_max_tokens(
    summarizer: Summarizer, model_server: FakeModelServer
) -> None:
    model_server.answer_chat(GOOD)
    result = await summarizer.summarize(CHAT, previous_summary="## Goal\nold", window_tokens=12_000)
    (request,) = model_server.requests_to(CHAT_PATH)
    assert result.calls == 1
    assert request.json()["max_tokens"] == 8_192
    assert "[User]: Why does login fail?" in request.json()["messages"][1]["content"]


async def test_a_history_needing_more_parts_than_allowed_is_refused_before_any_request(
    model_server: FakeModelServer,
) -> None:
    summarizer = summarizer_for(model_server.base_url, max_output_tokens=1_000)
    # Each part holds at most the window's 18,000 bytes: this history needs over twice the allowed parts.
    history = [{"role": "user", "content": f"step {n} " + "x" * 6_000} for n in range(6 * MAX_SUMMARY_PARTS)]
    try:
        with pytest.raises(SummarizerError) as error:
            await summarizer.summarize(history, window_tokens=6_000)
    finally:
        await summarizer.aclose()
    assert error.value.reason == "too_many_parts"
    assert "throughMessageId" in error.value.detail
    assert model_server.requests_to(CHAT_PATH) == []


async def test_a_window_with_no_room_beside_the_answer_is_refused_before_any_request(
    model_server: FakeModelServer,
) -> None:
    summarizer = summarizer_for(model_server.base_url, max_output_tokens=4_000)
    try:
        with pytest.raises(SummarizerError) as error:
            await summarizer.summarize(CHAT, window_tokens=5_000)
    finally:
        await summarizer.aclose()
    assert error.value.reason == "window_too_small"
    assert model_server.requests_to(CHAT_PATH) == []


async def test_a_summarizers_credentials_never_reach_an_error(model_server: FakeModelServer) -> None:
    model_server.fail(CHAT_PATH)
    summarizer = summarizer_for(model_server.base_url.replace("http://", "http://admin:hunter2@"))
    try:
        with pytest.raises(SummarizerError) as error:
            await summarizer.summarize(CHAT)
    finally:
        await summarizer.aclose()
    assert error.value.reason == "http_status" and "hunter2" not in error.value.detail
