"""Real sessions that Claude Code and pi wrote in real use, read from a folder beside the checkout (never
copied into the repository): ``PROJECTOR_REAL_SESSIONS``, or the first ``shared/realdata`` folder above
this file. Every test skips when the folder is absent.

``messages`` counts the conversation (runtime facts such as hook lines, and switch markers, are counted in
``stored`` only). Where it differs from a count of the file's message lines, ``note`` says why: a response
whose lines are interleaved with the answers of its calls is one message here, and lines on a branch the
session left are reported, not imported.
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from app.importers.imported import ImportResult
from app.importers.registry import parse_import
from app.projections.types import ProjectionContext
from app.services.turn_splice import count_turn
from tests.importers import checks
from tests.providers.ai_sdk_preflight import Preflight
from tests.services.test_turn_splice import build_turn_or_none, turn_answer, turn_builders


def _folder() -> Path | None:
    configured = os.environ.get("PROJECTOR_REAL_SESSIONS")
    if configured:
        return Path(configured)
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "realdata"
        if candidate.is_dir():
            return candidate
    return None


FOLDER = _folder()


@dataclass(frozen=True)
class Expected:
    messages: int
    stored: int
    calls: int
    reasoning: int
    errors: int
    unanswered: int = 0
    branches: int = 0
    boundaries: int = 0
    images: int = 0
    note: str = ""


EXPECTED = {
    "claude-code/ThomasJMcGovern--Golfgod_v1--c2f506b9--chat.json": Expected(
        437,
        437,
        261,
        144,
        16,
        branches=2,
        boundaries=1,
        images=2,
        note="445 message lines: two rewinds left 8 (2 calls, 2 errors, 2 signed thinking blocks) on branches",
    ),
    "claude-code/applab-nl--dmux--eef6c282--chat.json": Expected(111, 115, 50, 10, 3),
    "claude-code/conneroisu--templar--35fb9f94--chat.json": Expected(
        338, 780, 168, 0, 27, boundaries=1, note="442 hook lines kept as runtime facts; the boundary is made"
    ),
    "claude-code/d-kimuson--claude-code-viewer--5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": Expected(25, 25, 13, 0, 2),
    "claude-code/d-kimuson--claude-code-viewer--fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": Expected(
        23, 23, 11, 0, 0, note="405 of 438 lines are a subagent's sidechain, skipped"
    ),
    "claude-code/dirvine--saorsa-core--1236ae25--chat.json": Expected(133, 316, 63, 0, 3),
    "claude-code/jim-at-jibba--harness-lab--5ca71f8c--chat.json": Expected(
        79,
        120,
        33,
        19,
        5,
        note="16 hook context and skill listing attachments the model saw; 93 when the 14 pieces of responses"
        " split by their calls' answers count apart",
    ),
    "claude-code/pleelapr--a-sdlc--41db236f--chat.json": Expected(
        57, 59, 26, 27, 4, note="two conversations in one file (a plan accepted with a cleared context), in order"
    ),
    "claude-code/pookNast--loopkit--73124c94--chat.json": Expected(
        252,
        266,
        134,
        7,
        6,
        note="278 when 27 response pieces count apart; 1 local command output and the skill listing are user messages",
    ),
    "pi/badlogic--pi-mono--705ba5d4--compact.jsonl": Expected(
        1015, 1015, 432, 0, 17, unanswered=3, boundaries=2, images=3
    ),
    "pi/badlogic--pi-mono--d5dde00d--session.jsonl": Expected(456, 464, 189, 182, 12, boundaries=1),
    "pi/badlogic--pi-mono--large-session.jsonl": Expected(914, 1018, 391, 1, 19, unanswered=18),
}

pytestmark = pytest.mark.skipif(FOLDER is None, reason="the real sessions folder is absent")


def _import(name: str) -> ImportResult:
    assert FOLDER is not None
    path = FOLDER / name
    if not path.exists():
        pytest.skip(f"{name} is absent")
    return parse_import(name.split("/")[0], path.read_bytes())


@pytest.mark.parametrize("name", EXPECTED)
def test_the_session_imports_with_the_counts_it_holds(name: str) -> None:
    result = _import(name)
    expected = EXPECTED[name]
    [session] = result.sessions
    tool_results = checks.parts_of(session, "tool-result")
    images = len(checks.parts_of(session, "image")) + sum(
        1
        for part in tool_results
        if part["output"]["type"] == "content"
        for item in part["output"]["value"]
        if item["type"].startswith("image")
    )
    counted = Expected(
        messages=len(checks.conversation(session)),
        stored=len(session.messages),
        calls=len(checks.parts_of(session, "tool-call")),
        reasoning=len(checks.parts_of(session, "reasoning")),
        errors=sum(1 for part in tool_results if part["output"]["type"] == "error-text"),
        unanswered=len(result.report.unanswered_calls),
        branches=len(result.report.branches),
        boundaries=sum(1 for m in session.messages if m.metadata.get("runtimeKind") == "compact_boundary"),
        images=images,
        note=expected.note,
    )
    assert counted == expected
    assert result.report.invalid == []


@pytest.mark.parametrize("name", EXPECTED)
def test_every_message_is_one_the_append_endpoint_takes(name: str) -> None:
    assert checks.append_problems(_import(name).sessions[0]) == []


@pytest.mark.parametrize("name", EXPECTED)
def test_every_call_is_answered_or_reported_and_every_view_holds(name: str) -> None:
    result = _import(name)
    checks.assert_every_call_answered_or_reported(result)
    checks.assert_views_hold(result.sessions[0])


@pytest.mark.parametrize("name", EXPECTED)
def test_importing_twice_gives_the_same_session(name: str) -> None:
    assert _import(name).sessions == _import(name).sessions


@pytest.mark.parametrize("name", EXPECTED)
def test_the_file_cut_short_gives_a_prefix_of_what_the_whole_file_gives(name: str) -> None:
    """What a follower sees while the session is written: at cuts through the file (a transcript that grows
    by lines, or a chat.json rewritten with more entries), the settled messages open the whole file's
    messages, or differ only where the session later left a branch."""
    assert FOLDER is not None
    data = (FOLDER / name).read_bytes()
    if name.endswith(".json"):
        entries: list[Any] = orjson.loads(data)
        count = len(entries)

        def cut_at(cut: int) -> bytes:
            return orjson.dumps(entries[:cut])
    else:
        lines = data.splitlines(keepends=True)
        count = len(lines)

        def cut_at(cut: int) -> bytes:
            return b"".join(lines[:cut])

    full = _import(name)
    messages = full.sessions[0].messages
    left = {message_id for branch in full.report.branches for message_id in branch.message_ids}
    for cut in range(1, count, max(1, count // 12)):
        part = parse_import(name.split("/")[0], cut_at(cut))
        if not part.sessions:
            continue
        session = part.sessions[0]
        for index, message in enumerate(session.messages[: session.settled]):
            if message != messages[index]:
                assert message.id in left, (index, message.id)
                break


def test_every_session_gives_chat_payloads_every_provider_accepts(ai_sdk_preflight: Preflight) -> None:
    run = checks.PayloadRun()
    for name in EXPECTED:
        checks.check_payloads(_import(name).sessions[0], run)
    assert run.problems == []
    rejected = [result for result in ai_sdk_preflight(run.ai_sdk_payloads) if not result["ok"]]
    assert rejected == []


def test_real_sessions_grown_turn_by_turn_are_spliced_to_the_whole_build() -> None:
    """Each session grows ten messages at a time, as its agent wrote them; each step's ``/chat`` build is
    spliced from what the previous step's kept, and is the whole build byte for byte (payload, diagnostics,
    view, prefix) and counts alike. Repairs before the cut (the large pi session's 18 unanswered calls) are
    kept with the turn, so nearly every build splices: 440 of 458 here, the first of each session and a few
    whose tail did not build alike."""
    spliced = built = 0
    for name in EXPECTED:
        session = _import(name).sessions[0]
        messages = checks.engine_messages(session)
        model = checks.model_for("anthropic", session)
        ctx = ProjectionContext(provider="anthropic", model=model)
        builders = turn_builders("anthropic", ctx, None, checks.TOOLS)
        kept = None
        for end in range(10, len(messages) + 1, 10):
            turn = build_turn_or_none(messages[:end], builders, None, kept, keep=True)
            whole = build_turn_or_none(messages[:end], builders, None, None, keep=False)
            assert (turn is None) == (whole is None)
            if turn is None or whole is None:
                continue
            assert turn_answer(turn) == turn_answer(whole), (name, end)
            counted, kept = count_turn(messages[:end], turn.view, ctx, turn.joined, turn.next_turn)
            assert counted == count_turn(messages[:end], whole.view, ctx, None, None)[0], (name, end)
            spliced += turn.spliced
            built += 1
    assert spliced / built > 0.9, (spliced, built)
