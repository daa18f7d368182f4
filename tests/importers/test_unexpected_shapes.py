"""Fields of a JSON type the source does not promise: each is read as far as it goes or reported by its
line, and nothing an importer did not foresee becomes a 500."""

import json
import logging
from typing import Any

import pytest

from app.importers import anthropic_blocks, claude_code
from app.importers.imported import ImportRefused
from app.importers.registry import parse_import
from tests.importers.claude_code_lines import answer, jsonl, prompt, results, system, text


def user_line(content: Any) -> dict[str, Any]:
    return prompt("u1", None, content)


SHAPES: dict[str, tuple[str, bytes]] = {
    "an OpenAI image_url given as the URL itself": (
        "openai-chat",
        json.dumps(
            [{"role": "user", "content": [{"type": "image_url", "image_url": "https://example.com/cat.png"}]}]
        ).encode(),
    ),
    "an OpenAI function given as a string": (
        "openai-chat",
        json.dumps([{"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": "ls"}]}]).encode(),
    ),
    "an OpenAI input_audio given as a string": (
        "openai-chat",
        json.dumps([{"role": "user", "content": [{"type": "input_audio", "input_audio": "UklGR"}]}]).encode(),
    ),
    "AI SDK content that is a number": ("ai-sdk", json.dumps([{"role": "user", "content": 5}]).encode()),
    "a Claude Code image whose source is a string": (
        "claude-code",
        jsonl(user_line([{"type": "image", "source": "x"}])),
    ),
    "a Claude Code tool result whose content is a number": (
        "claude-code",
        jsonl(user_line([{"type": "tool_result", "tool_use_id": "t", "content": 5}])),
    ),
    "a Claude Code api_error whose error is a string": (
        "claude-code",
        jsonl(user_line("hi"), system("e1", "u1", "api_error", error="Connection error.")),
    ),
    "a Claude Code stop_hook_summary whose hookInfos is a number": (
        "claude-code",
        jsonl(user_line("hi"), system("h1", "u1", "stop_hook_summary", hookInfos=1)),
    ),
    "an opencode tool attachment that is not an object": (
        "opencode",
        json.dumps(
            {
                "info": {"id": "ses_1"},
                "messages": [
                    {
                        "info": {"id": "msg_1", "role": "assistant"},
                        "parts": [
                            {
                                "type": "tool",
                                "callID": "c",
                                "tool": "read",
                                "state": {"status": "completed", "output": "x", "attachments": ["file:///a.png"]},
                            }
                        ],
                    }
                ],
            }
        ).encode(),
    ),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_field_of_an_unexpected_type_is_read_or_reported_never_raised(shape: str) -> None:
    format, data = SHAPES[shape]
    result = parse_import(format, data)
    report = result.report
    assert result.sessions[0].messages or report.invalid or report.skipped or report.repairs


def test_an_image_url_given_as_the_url_itself_is_the_image() -> None:
    format, data = SHAPES["an OpenAI image_url given as the URL itself"]
    [message] = parse_import(format, data).sessions[0].messages
    assert message.content == [{"type": "image", "image": "https://example.com/cat.png"}]


def test_ai_sdk_content_that_is_neither_text_nor_parts_is_an_invalid_line() -> None:
    format, data = SHAPES["AI SDK content that is a number"]
    result = parse_import(format, data)
    assert [(s.line, s.reason) for s in result.report.invalid] == [(1, "content is neither text nor a list of parts")]
    with pytest.raises(ImportRefused) as refused:
        parse_import(format, data, strict=True)
    assert refused.value.line == 1


def test_a_tool_result_whose_content_is_not_text_or_blocks_is_kept_as_json() -> None:
    format, data = SHAPES["a Claude Code tool result whose content is a number"]
    [tool] = parse_import(format, data).sessions[0].messages
    assert isinstance(tool.content, list) and tool.content[0]["output"] == {"type": "json", "value": 5}


def failing(*record: Any) -> Any:
    raise TypeError(f"a shape nobody foresaw in {record!r}")


def test_a_record_the_importer_fails_on_is_an_invalid_line_logged_where_it_failed_without_its_content(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(anthropic_blocks, "assistant_parts", failing)
    secret = text("sk-secret-in-the-session")
    data = jsonl(prompt("u1", None, "Go"), answer("a1", "u1", "msg_1", secret), prompt("u2", "a1", "Thanks"))
    with caplog.at_level(logging.WARNING, logger="projector.importers"):
        result = parse_import("claude-code", data)
    assert [(s.line, s.reason) for s in result.report.invalid] == [
        (2, "a record of a shape the importer does not read (TypeError)")
    ]
    assert [m.id for m in result.sessions[0].messages] == ["u1", "u2"]
    [logged] = caplog.records
    assert logged.exc_info is None and "TypeError" in logged.getMessage() and "failing" in logged.getMessage()
    assert "sk-secret-in-the-session" not in logged.getMessage()
    with pytest.raises(ImportRefused) as refused:
        parse_import("claude-code", data, strict=True)
    assert refused.value.line == 2


def test_a_failure_outside_any_record_refuses_the_file_instead_of_raising(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_code, "conversation_paths", failing)
    with pytest.raises(ImportRefused) as refused:
        parse_import("claude-code", jsonl(prompt("u1", None, "Go")))
    assert refused.value.status == 422
    assert refused.value.reason == "not a claude-code file the importer can read (TypeError)"


def test_a_tool_result_line_keeps_the_results_it_could_read() -> None:
    data = jsonl(
        prompt("u1", None, "Go"),
        answer("a1", "u1", "msg_1", {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}),
        results("r1", "a1", {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "image", "source": 5}]}),
    )
    result = parse_import("claude-code", data)
    assert result.report.invalid == [] and [m.id for m in result.sessions[0].messages] == ["u1", "msg_1", "r1"]
