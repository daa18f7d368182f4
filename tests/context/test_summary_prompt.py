from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.context.summary_prompt import (
    SYSTEM_PROMPT,
    TEMPLATE_HEADINGS,
    build_summary_messages,
    clean_summary,
    has_template_heading,
    render_transcript,
    take_part,
    transcript_blocks,
)
from app.engine.kinds import Kind
from app.projections.types import ProjectedMessage, View

CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "Why does login fail?"},
    {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "check auth"},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "input": {"path": "src/auth.ts"}},
        ],
    },
    {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "Read",
                "output": {"type": "text", "value": "x" * 50},
            }
        ],
    },
    {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c2",
                "toolName": "Bash",
                "output": {"type": "error-json", "value": {"code": 1}},
            }
        ],
    },
    {"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image", "image": "AAAA"}]},
]


def test_chat_messages_render_as_labelled_lines_with_tool_results_cut() -> None:
    text = render_transcript(CHAT, tool_result_chars=20)
    assert text.splitlines() == [
        "[User]: Why does login fail?",
        "",
        "[Assistant thinking]: check auth",
        "",
        '[Assistant tool call]: Read({"path":"src/auth.ts"})',
        "",
        f"[Tool result] Read: {'x' * 20}... [30 more characters cut]",
        "",
        '[Tool error] Bash: {"code":1}',
        "",
        "[User]: see",
        "",
        "[User]: [image]",
    ]


def test_projected_messages_render_and_summaries_are_labelled_as_earlier() -> None:
    projected = [
        ProjectedMessage(View.COMPACT, "user", Kind.HANDOFF_SUMMARY, ("h1",), "handed over"),
        ProjectedMessage(View.COMPACT, "user", Kind.USER_INPUT, ("m1",), "go on"),
    ]
    assert render_transcript(projected, tool_result_chars=10) == "[Earlier summary]: handed over\n\n[User]: go on"


def test_plain_text_is_accepted_as_the_transcript() -> None:
    messages = build_summary_messages("  user: hi\nassistant: hello  ")
    assert "<conversation>\nuser: hi\nassistant: hello\n</conversation>" in messages[1]["content"]


def test_system_prompt_forbids_continuing_the_task_and_carries_the_template() -> None:
    assert "Do not continue the task" in SYSTEM_PROMPT
    assert "do not call tools" in SYSTEM_PROMPT
    for heading in TEMPLATE_HEADINGS:
        assert f"## {heading}" in SYSTEM_PROMPT


def test_first_summary_asks_for_a_summary_and_has_no_previous_one() -> None:
    system, user = build_summary_messages(CHAT)
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert "<previous-summary>" not in user["content"]
    assert user["content"].endswith("Summarise the conversation above in the template.")


def test_previous_summary_is_updated_rather_than_restarted() -> None:
    _, user = build_summary_messages(CHAT, previous_summary="## Goal\nold goal\n")
    content = user["content"]
    assert content.startswith("<previous-summary>\n## Goal\nold goal\n</previous-summary>")
    assert content.index("</previous-summary>") < content.index("<conversation>")
    assert "Update that summary" in content
    assert "the conversation wins" in content


def test_caller_instructions_are_appended() -> None:
    _, user = build_summary_messages(CHAT, instructions="  Focus on the auth module.  ")
    assert user["content"].endswith("Additional instructions for this summary:\nFocus on the auth module.")


def test_thinking_and_analysis_blocks_are_stripped_and_summary_tags_unwrapped() -> None:
    answer = "<think>plan it</think>\n<analysis>long</analysis>\n<summary>\n## Goal\nfix\n</summary>"
    assert clean_summary(answer) == "## Goal\nfix"


def test_an_answer_cut_inside_its_thinking_cleans_to_nothing() -> None:
    assert clean_summary("<think>still thinking about") == ""


def test_template_headings_are_recognised_in_common_markdown_forms() -> None:
    assert has_template_heading("## Goal\nfix")
    assert has_template_heading("**Next steps:**\n- run tests")
    assert has_template_heading("# relevant files\n- a.ts")
    assert not has_template_heading("Sure! I will now edit src/auth.ts to fix the bug.")


def test_denied_and_content_outputs_render_as_words_not_json() -> None:
    results = [
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "Bash",
                    "output": {"type": "execution-denied", "reason": "not allowed"},
                },
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "toolName": "Screenshot",
                    "output": {
                        "type": "content",
                        "value": [
                            {"type": "text", "text": "the page"},
                            {"type": "media", "data": "AAAA", "mediaType": "image/png"},
                        ],
                    },
                },
            ],
        }
    ]
    assert render_transcript(results, tool_result_chars=100).splitlines() == [
        "[Tool error] Bash: execution denied (not allowed)",
        "",
        "[Tool result] Screenshot: the page [image]",
    ]


def long_chat(turns: int, words: str = "word ") -> list[dict[str, Any]]:
    return [
        message
        for turn in range(turns)
        for message in (
            {"role": "user", "content": f"step {turn}: " + words * 300},
            {"role": "assistant", "content": f"done {turn}"},
        )
    ]


@given(
    turns=st.integers(min_value=1, max_value=12),
    limits=st.lists(st.integers(min_value=200, max_value=20_000), min_size=1, max_size=5),
    words=st.sampled_from(["word ", "日本語 ", "\U0001f600 "]),
)
def test_a_transcript_taken_in_parts_keeps_every_block_in_order_within_each_limit(
    turns: int, limits: list[int], words: str
) -> None:
    chat = long_chat(turns, words)
    whole = render_transcript(chat, tool_result_chars=2_000)
    blocks = transcript_blocks(chat, tool_result_chars=2_000)
    assert "\n\n".join(blocks) == whole
    parts: list[tuple[str, int]] = []
    left = blocks
    while left:
        limit = limits[len(parts) % len(limits)]
        part, taken = take_part(left, limit)
        assert taken >= 1 and len(part.encode()) <= limit
        if sum(len(block.encode()) + 2 for block in left) - 2 <= limit:
            assert (part, taken) == ("\n\n".join(left), len(left))
        fitting = [block for block in left[:taken] if len(block.encode()) <= limit]
        assert [b for b in part.split("\n\n") if "characters cut]" not in b] == fitting
        parts.append((part, taken))
        left = left[taken:]
    assert sum(taken for _, taken in parts) == len(blocks)
