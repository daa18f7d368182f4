"""The compact view: the history a new summary must cover, prepared for a summarizer."""

from hypothesis import given, settings

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.compact import COMPACT_TOOL_RESULT_CHARS, project_compact
from app.projections.types import ProjectionContext, View
from tests import builders as b
from tests.projections.invariants import assert_calls_next_to_results
from tests.strategies import engine_histories

CTX = ProjectionContext(provider="anthropic", model="claude-sonnet-4-5")


def test_compact_view_starts_from_the_previous_summary_so_a_new_summary_keeps_it() -> None:
    projection = project_compact(
        b.engine(b.user("old"), b.boundary("b1"), b.summary("b1", "Before."), b.user("new"), b.assistant("ok")), CTX
    )
    assert [m.source_message_ids for m in projection.messages] == [("m3",), ("m4",), ("m5",)]
    assert projection.messages[0].semantic_type is Kind.COMPACT_SUMMARY
    assert all(m.view is View.COMPACT for m in projection.messages)


def test_compact_view_cuts_tool_outputs_short_even_under_a_larger_soft_limit() -> None:
    projection = project_compact(b.engine(b.tool_call("c1", "Read"), b.tool_result("c1", "a" * 10_000)), CTX)
    result = projection.messages[1]
    assert isinstance(result.content, list)
    value = result.content[0]["output"]["value"]
    assert value.startswith("a" * COMPACT_TOOL_RESULT_CHARS + "\n\n[Tool result truncated")
    assert projection.diagnostics.truncated_message_ids == ["m2"]


def test_compact_view_keeps_a_smaller_soft_limit() -> None:
    context = ProjectionContext(tool_result_soft_limit_chars=10)
    projection = project_compact(b.engine(b.tool_call("c1", "Read"), b.tool_result("c1", "a" * 100)), context)
    result = projection.messages[1]
    assert isinstance(result.content, list)
    assert result.content[0]["output"]["value"].startswith("a" * 10 + "\n\n")


def test_compact_view_turns_media_into_short_stubs() -> None:
    projection = project_compact(
        b.engine(
            b.user([b.text_part("see"), b.image_part(), b.file_part()]),
            b.tool_call("c1", "Shot"),
            b.tool_result("c1", output={"type": "content", "value": [b.media_item()]}),
        ),
        ProjectionContext(readable_media=("*/*",)),
    )
    assert projection.messages[0].content == [
        b.text_part("see"),
        b.text_part("[image]"),
        b.text_part("[Attached application/pdf: report.pdf]"),
    ]
    result = projection.messages[2]
    assert isinstance(result.content, list)
    assert result.content[0]["output"]["value"] == [{"type": "text", "text": "[image]"}]


def test_compact_view_leaves_out_reminders_and_never_replays_reasoning_natively() -> None:
    projection = project_compact(b.engine(b.reasoning("hmm", answer="done"), b.reminder("psst")), CTX)
    assert [m.content for m in projection.messages] == [[b.text_part("done")]]
    assert projection.diagnostics.hidden_message_ids == ["m2"]


def test_compact_view_keeps_reasoning_as_text_with_the_text_fallback() -> None:
    context = ProjectionContext(provider="anthropic", model="claude-sonnet-4-5", reasoning_fallback="text")
    projection = project_compact(b.engine(b.reasoning("hmm", answer="done")), context)
    assert projection.messages[0].content == [b.text_part("hmm"), b.text_part("done")]


def test_compact_view_stubs_pruned_results_like_the_model_view() -> None:
    projection = project_compact(b.engine(b.tool_call("c1", "Read"), b.tool_result("c1", "x", compacted=True)), CTX)
    result = projection.messages[1]
    assert isinstance(result.content, list)
    assert result.content[0]["output"]["value"] == "[Old tool result content cleared]"


@settings(max_examples=50)
@given(engine_histories())
def test_compact_view_accounts_for_everything_and_keeps_calls_with_results(history: list[EngineMessage]) -> None:
    projection = project_compact(history, ProjectionContext())
    sent = {source for m in projection.messages for source in m.source_message_ids}
    assert sent | set(projection.diagnostics.hidden_message_ids) == {m.id for m in history}
    assert all(m.semantic_type not in {Kind.COMPACT_BOUNDARY, Kind.RUNTIME_REMINDER} for m in projection.messages)
    assert_calls_next_to_results(projection.messages)
    for message in projection.messages:
        for part in message.content if isinstance(message.content, list) else []:
            assert part.get("type") not in {"image", "file", "reasoning"}
