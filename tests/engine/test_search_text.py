"""The facts search and analytics read are worked out from the parts: words, tool names, failed results."""

from app.engine.kinds import Kind
from app.engine.search_text import SEARCH_TEXT_MAX_CHARS, message_facts


def test_text_reasoning_tool_inputs_and_outputs_are_searchable() -> None:
    call = {
        "type": "tool-call",
        "toolCallId": "c1",
        "toolName": "read_file",
        "input": {"path": "build.log", "lines": [1, 2]},
    }
    facts = message_facts(
        Kind.TOOL_CALL,
        [{"type": "reasoning", "text": "Check the log."}, {"type": "text", "text": "Reading it."}, call],
        {},
    )
    assert facts.search_text.split("\n") == [
        "Check the log.",
        "Reading it.",
        "read_file",
        "path: build.log",
        "lines",
        "1",
        "2",
    ]
    assert facts.tool_calls == ("read_file",)
    assert (facts.tool_results, facts.tool_errors) == ((), ())


def test_a_failed_result_names_its_tool_among_the_errors() -> None:
    failed = {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "bash",
        "output": {"type": "error-text", "value": "exit 2"},
    }
    fine = {
        "type": "tool-result",
        "toolCallId": "c2",
        "toolName": "grep",
        "output": {"type": "content", "value": [{"type": "text", "text": "match"}, {"type": "media", "data": "AAAA"}]},
    }
    facts = message_facts(Kind.TOOL_RESULT, [failed, fine], {})
    assert facts.tool_results == ("bash", "grep")
    assert facts.tool_errors == ("bash",)
    assert "exit 2" in facts.search_text and "match" in facts.search_text and "AAAA" not in facts.search_text


def test_a_commands_output_is_searchable() -> None:
    facts = message_facts(Kind.BASH_EXECUTION, "pytest -q", {"command": "pytest -q", "output": "1 failed"})
    assert facts.search_text == "pytest -q\n1 failed"


def test_text_postgresql_cannot_hold_is_cleaned_and_long_text_is_cut() -> None:
    facts = message_facts(Kind.USER_INPUT, "a\x00b \ud800c \ue000d\ue001 " + "x" * SEARCH_TEXT_MAX_CHARS, {})
    assert facts.search_text.startswith("a b c d ")
    assert len(facts.search_text) <= SEARCH_TEXT_MAX_CHARS
