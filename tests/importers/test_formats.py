"""Every format's sample session, end to end: what the service will append and what it will serve from it."""

import json
from collections.abc import Callable
from typing import Any

import pytest

from app.importers.imported import ImportResult
from app.importers.registry import FORMATS, UnknownFormat, parse_import
from tests.importers import checks
from tests.importers.samples import SAMPLES
from tests.providers.ai_sdk_preflight import Preflight

LINE_FORMATS = ("claude-code", "pi")


def imported(format: str) -> ImportResult:
    return parse_import(format, SAMPLES[format]())


def test_every_format_has_a_sample() -> None:
    assert set(SAMPLES) == set(FORMATS)


@pytest.mark.parametrize("format", FORMATS)
def test_every_message_is_one_the_append_endpoint_takes(format: str) -> None:
    [session] = imported(format).sessions
    assert checks.append_problems(session) == []


@pytest.mark.parametrize("format", FORMATS)
def test_every_tool_call_is_answered_or_reported_unanswered(format: str) -> None:
    checks.assert_every_call_answered_or_reported(imported(format))


@pytest.mark.parametrize("format", FORMATS)
def test_every_view_projects_and_the_transcript_lists_the_messages_in_order(format: str) -> None:
    checks.assert_views_hold(imported(format).sessions[0])


def test_the_chat_payload_of_every_sample_passes_every_providers_checks(ai_sdk_preflight: Preflight) -> None:
    run = checks.PayloadRun()
    for format in FORMATS:
        checks.check_payloads(imported(format).sessions[0], run)
    assert run.problems == []
    rejected = [result for result in ai_sdk_preflight(run.ai_sdk_payloads) if not result["ok"]]
    assert rejected == [] and len(run.ai_sdk_payloads) == len(FORMATS)


@pytest.mark.parametrize("format", FORMATS)
def test_the_same_bytes_give_the_same_session_and_ids(format: str) -> None:
    first, second = imported(format), imported(format)
    assert first.sessions == second.sessions
    ids = [message.id for message in first.sessions[0].messages]
    assert len(ids) == len(set(ids)), "an id repeats within the session"


def grown(parse: Callable[[Any], ImportResult], prefixes: list[Any], whole: Any) -> None:
    """Each prefix's settled messages open the whole file's messages, unless the session later left them
    (then the first difference is a message of a reported branch)."""
    full = parse(whole)
    messages = full.sessions[0].messages
    left = {message_id for branch in full.report.branches for message_id in branch.message_ids}
    for prefix in prefixes:
        result = parse(prefix)
        if not result.sessions:
            continue
        session = result.sessions[0]
        settled = session.messages[: session.settled]
        for index, message in enumerate(settled):
            if index >= len(messages) or message != messages[index]:
                assert message.id in left, (index, message.id)
                break


@pytest.mark.parametrize("format", LINE_FORMATS)
def test_a_grown_file_gives_the_messages_it_gave_before_and_then_new_ones(format: str) -> None:
    data = SAMPLES[format]()
    lines = data.splitlines(keepends=True)
    prefixes = [b"".join(lines[:cut]) for cut in range(1, len(lines))]
    grown(lambda body: parse_import(format, body), prefixes, data)


def test_a_rewritten_json_array_that_grew_gives_the_old_messages_then_new_ones() -> None:
    records = [json.loads(line) for line in SAMPLES["claude-code"]().splitlines()]
    prefixes = [json.dumps(records[:cut]).encode() for cut in range(1, len(records))]
    grown(lambda body: parse_import("claude-code", body), prefixes, json.dumps(records).encode())


@pytest.mark.parametrize("format", ["opencode", "openai-chat", "anthropic-messages", "ai-sdk"])
def test_a_document_with_more_messages_gives_the_old_messages_then_new_ones(format: str) -> None:
    document = json.loads(SAMPLES[format]())
    prefixes = []
    for cut in range(1, len(document["messages"])):
        prefixes.append(json.dumps({**document, "messages": document["messages"][:cut]}).encode())
    grown(lambda body: parse_import(format, body), prefixes, json.dumps(document).encode())


def test_an_unknown_format_is_refused_naming_the_field() -> None:
    with pytest.raises(UnknownFormat) as refused:
        parse_import("codex", b"")
    assert refused.value.status == 422 and refused.value.extensions["field"] == "format"
