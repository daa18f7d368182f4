"""The export view: the conversation without runtime noise, optionally redacted, as JSON values or Markdown."""

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.export import project_export
from app.projections.markdown import render_markdown
from app.projections.types import ProjectionContext, View
from tests import builders as b
from tests.strategies import engine_histories

KEY = "sk-proj-" + "A1b2" * 10


def conversation() -> list[EngineMessage]:
    return b.engine(
        b.system("Workspace root is /repo"),
        b.user(f"my key is {KEY}"),
        b.reasoning("thinking", answer="I will read it"),
        b.tool_call("c1", "Read", path="/home/alice/.env"),
        b.tool_result("c1", "OPENAI_API_KEY=" + KEY, compacted=True),
        b.reminder("psst"),
        b.agent_switch("Switched to build"),
        b.boundary("b1"),
        b.summary("b1", "Earlier."),
        b.user("Continue.", synthetic=True),
        b.bash("env | grep TOKEN", "GITHUB_TOKEN=ghp_" + "a" * 36, exit_code=0),
        b.handoff("Handed over."),
    )


def test_export_removes_runtime_noise_and_keeps_the_conversation() -> None:
    projection = project_export(conversation(), ProjectionContext())
    assert [m.semantic_type for m in projection.messages] == [
        Kind.SYSTEM_NOTE,
        Kind.USER_INPUT,
        Kind.ASSISTANT_TEXT,
        Kind.TOOL_CALL,
        Kind.TOOL_RESULT,
        Kind.BASH_EXECUTION,
        Kind.HANDOFF_SUMMARY,
    ]
    assert projection.diagnostics.hidden_message_ids == ["m6", "m7", "b1", "m9", "m10"]
    assert all(m.view is View.EXPORT for m in projection.messages)


def test_export_keeps_full_tool_results_and_drops_provider_signatures() -> None:
    projection = project_export(conversation(), ProjectionContext())
    result = projection.messages[4]
    assert isinstance(result.content, list)
    assert result.content[0]["output"]["value"] == "OPENAI_API_KEY=" + KEY
    assert projection.messages[2].content == [{"type": "reasoning", "text": "thinking"}, b.text_part("I will read it")]


def test_export_without_redaction_keeps_secrets() -> None:
    projection = project_export(conversation(), ProjectionContext())
    assert KEY in str(projection.messages[1].content)


def test_redacted_export_masks_text_tool_inputs_tool_outputs_and_bash_facts() -> None:
    projection = project_export(conversation(), ProjectionContext(redact=True))
    rendered = repr([(m.content, m.metadata.extra) for m in projection.messages])
    assert KEY not in rendered
    assert "ghp_" not in rendered
    assert projection.messages[1].content == "my key is [REDACTED:openai-key]"
    bash = projection.messages[5]
    assert bash.metadata.extra["output"] == "GITHUB_TOKEN=[REDACTED:github-token]"
    assert bash.metadata.notes == ("secrets redacted",)
    assert projection.diagnostics.reasons["m2"] == ["secrets redacted"]


def test_export_renders_to_markdown() -> None:
    projection = project_export(conversation(), ProjectionContext(redact=True))
    markdown = render_markdown(projection, title="Login bug")
    assert markdown.startswith("# Login bug\n\n## System\n\nWorkspace root is /repo\n\n## User\n\nmy key is [REDACTED")
    assert "## Assistant\n\n> *Thinking:* thinking\n\nI will read it" in markdown
    assert '**Tool call** `Read` (c1)\n\n```json\n{\n  "path": "/home/alice/.env"\n}\n```' in markdown
    assert "**Tool result** `Read` (c1)\n\n```\nOPENAI_API_KEY=[REDACTED:openai-key]\n```" in markdown
    assert "## User ran a command\n\n```sh\n$ env | grep TOKEN\n```\n\n```\nGITHUB_TOKEN=[REDACTED" in markdown
    assert "## Handoff summary\n\nHanded over." in markdown
    assert "psst" not in markdown
    assert markdown.endswith("\n")


def test_markdown_names_media_and_fences_results_that_hold_backticks() -> None:
    projection = project_export(
        b.engine(
            b.user([b.text_part("see"), b.image_part()]),
            b.tool_call("c1", "Shot"),
            b.tool_results(
                b.result_part("c1", [b.media_item()], output_type="content"),
                b.result_part("c2", "```inner```", tool_name="Bash"),
            ),
            b.approval_request("a1", "c1"),
            b.approval_response("a1", approved=False, reason="not now"),
        ),
        ProjectionContext(),
    )
    markdown = render_markdown(projection)
    assert "*[image: image/png]*" in markdown
    assert "*[media: image/png]*" in markdown
    assert "````\n```inner```\n````" in markdown
    assert "*Approval requested for tool call c1*" in markdown
    assert "*Tool call denied: not now*" in markdown


@settings(max_examples=40)
@given(engine_histories(), st.integers(0, 40), st.integers(1, 40), st.booleans())
def test_any_page_exports_as_the_same_slice_of_the_whole(
    history: list[EngineMessage], start: int, size: int, redact: bool
) -> None:
    ctx = ProjectionContext(redact=redact)
    page = history[start : start + size]
    page_ids = {m.id for m in page}
    whole = project_export(history, ctx)
    assert project_export(page, ctx).messages == [m for m in whole.messages if m.source_message_ids[0] in page_ids]
    render_markdown(project_export(page, ctx))
