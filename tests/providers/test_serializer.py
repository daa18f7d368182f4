from dataclasses import replace
from typing import Any

from app.engine.kinds import Kind
from app.engine.persisted import PersistedMessage
from app.projections.types import ProjectedMessage, Repair
from app.providers.serializer import to_chat_messages
from tests.builders import assistant, image_part, runtime, system, text_part, tool_call, tool_result, user
from tests.providers.projected import raw


def rules(repairs: list[Repair]) -> list[str]:
    return [repair.rule for repair in repairs]


def test_string_content_becomes_one_text_part() -> None:
    messages, repairs = to_chat_messages(raw(user("hi")))
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert repairs == []


def test_request_system_and_leading_notes_become_one_first_system_message() -> None:
    messages, _ = to_chat_messages(raw(system("Use tabs."), user("hi"), system("Later note")), system="Be brief.")
    assert messages[0] == {"role": "system", "content": "Be brief.\n\nUse tabs."}
    assert messages[2] == {"role": "system", "content": "Later note"}


def test_blank_system_prompt_adds_no_system_message() -> None:
    messages, _ = to_chat_messages(raw(user("hi")), system="  ")
    assert [message["role"] for message in messages] == ["user"]


def test_unknown_part_is_dropped_and_reported_with_its_message_id() -> None:
    messages, repairs = to_chat_messages(raw(user([text_part("hi"), {"type": "hologram"}])))
    assert messages[0]["content"] == [{"type": "text", "text": "hi"}]
    assert repairs[0].rule == "unknown-part"
    assert repairs[0].message_ids == ("m1",)


def test_keys_the_sdk_does_not_define_are_removed_and_reported() -> None:
    messages, repairs = to_chat_messages(raw(user([text_part("hi", id="p1", cache=True)])))
    assert messages[0]["content"] == [{"type": "text", "text": "hi"}]
    assert rules(repairs) == ["unknown-part-keys"]


def test_part_a_role_cannot_carry_is_dropped_and_reported() -> None:
    messages, repairs = to_chat_messages(raw(user([text_part("hi"), {"type": "reasoning", "text": "x"}])))
    assert messages[0]["content"] == [{"type": "text", "text": "hi"}]
    assert rules(repairs) == ["part-not-allowed"]


def test_assistant_image_becomes_a_file_part() -> None:
    messages, repairs = to_chat_messages(raw(assistant([image_part()])))
    assert messages[0]["content"] == [{"type": "file", "data": "iVBORw0KGgo=", "mediaType": "image/png"}]
    assert rules(repairs) == ["assistant-image-as-file"]


def test_lone_surrogates_in_the_system_prompt_become_replacement_characters_and_pairs_join() -> None:
    messages, repairs = to_chat_messages(raw(user("hi")), system="sys\udc00 \ud83d\ude00")
    assert messages[0]["content"] == "sys\ufffd 😀"
    assert rules(repairs) == ["unpaired-surrogates"]


def test_a_marked_message_is_cleaned_for_the_target_and_each_change_reported_naming_it() -> None:
    [marked] = raw(user("cat image.png: \x89PNG\x00\x00 and half \ud83d"))
    assert marked.unusual_text
    kept, kept_repairs = to_chat_messages([marked])
    removed, removed_repairs = to_chat_messages([marked], remove_nul=True)
    assert kept[0]["content"] == [{"type": "text", "text": "cat image.png: \x89PNG\x00\x00 and half \ufffd"}]
    assert removed[0]["content"] == [{"type": "text", "text": "cat image.png: \x89PNG and half \ufffd"}]
    assert [(r.rule, r.message_ids) for r in kept_repairs] == [("unpaired-surrogates", marked.source_message_ids)]
    assert [(r.rule, r.detail) for r in removed_repairs] == [
        ("unpaired-surrogates", "replaced 1 unpaired UTF-16 surrogate(s) with U+FFFD in the message"),
        ("nul-characters", "removed 2 NUL character(s) from the message"),
    ]


def test_every_string_of_a_marked_message_is_cleaned_keys_and_tool_inputs_included() -> None:
    [marked] = raw(tool_call("c1", "Read", {"pa\x00th": "src/\udc00.ts"}))
    messages, _ = to_chat_messages([marked], remove_nul=True)
    content = messages[0]["content"]
    assert isinstance(content, list)
    call = content[0]
    assert call["type"] == "tool-call"
    assert call["input"] == {"path": "src/\ufffd.ts"}


def test_an_unmarked_message_is_never_looked_at() -> None:
    """The mark set at write time is the only trigger: an unmarked message goes on as it is, whatever it
    holds, which is what makes clean messages cost nothing."""
    [marked] = raw(user("a\x00b"))
    messages, repairs = to_chat_messages([replace(marked, unusual_text=False)], remove_nul=True)
    assert messages[0]["content"] == [{"type": "text", "text": "a\x00b"}]
    assert repairs == []


def test_stored_text_goes_on_as_it_was_stored() -> None:
    """Unmarked stored text needs nothing: nothing to clean, nothing reported."""
    stored = raw(user("帮我看看 🙂"), tool_call("c1", "Read", path="src/🙂.ts"))
    messages, repairs = to_chat_messages(stored)
    assert messages[0]["content"] == [{"type": "text", "text": "帮我看看 🙂"}]
    call = {"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "input": {"path": "src/🙂.ts"}}
    assert messages[1]["content"] == [call]
    assert repairs == []


def test_tool_call_stays_as_it_was_stored() -> None:
    messages, repairs = to_chat_messages(raw(tool_call("c1", "Read", path="a.ts")))
    assert messages == [
        {
            "role": "assistant",
            "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "input": {"path": "a.ts"}}],
        }
    ]
    assert repairs == []


def reminder_text(text: str) -> PersistedMessage:
    return runtime(Kind.RUNTIME_REMINDER, f"<system-reminder>{text}</system-reminder>")


def as_sent(*messages: PersistedMessage) -> list[ProjectedMessage]:
    """The messages as the model view hands them on: a reminder as user text in its frame."""
    return [replace(m, role="user") if m.semantic_type is Kind.RUNTIME_REMINDER else m for m in raw(*messages)]


def texts_of(message: Any) -> list[str]:
    return [part["text"] for part in message["content"]]


def test_a_reminder_joins_the_user_turn_before_it_else_after_it_else_stays_where_it_stands() -> None:
    messages, repairs = to_chat_messages(
        as_sent(
            reminder_text("first"),
            user("fix it"),
            reminder_text("then"),
            tool_call("c1", "Read"),
            tool_result("c1", "ok"),
            reminder_text("in the loop"),
            assistant("done"),
        )
    )
    assert [message["role"] for message in messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert texts_of(messages[0]) == [
        "<system-reminder>first</system-reminder>",
        "fix it",
        "<system-reminder>then</system-reminder>",
    ]
    # In a tool loop it never reaches back to the prompt, which a provider has cached by then.
    assert texts_of(messages[3]) == ["<system-reminder>in the loop</system-reminder>"]
    assert repairs == []


def test_reminders_in_a_tool_loop_make_one_user_message_until_a_prompt_takes_them() -> None:
    loop = [user("fix it"), tool_call("c1", "Read"), tool_result("c1", "ok"), reminder_text("a"), reminder_text("b")]
    messages, _ = to_chat_messages(as_sent(*loop))
    assert [message["role"] for message in messages] == ["user", "assistant", "tool", "user"]
    assert texts_of(messages[3]) == ["<system-reminder>a</system-reminder>", "<system-reminder>b</system-reminder>"]
    prompted, _ = to_chat_messages(as_sent(*loop, user("next")))
    assert texts_of(prompted[3]) == [*texts_of(messages[3]), "next"]


def test_a_reminder_with_no_user_turn_to_join_stays_a_message_of_its_own() -> None:
    messages, _ = to_chat_messages(as_sent(assistant("hello"), reminder_text("alone")))
    assert messages[1] == {
        "role": "user",
        "content": [{"type": "text", "text": "<system-reminder>alone</system-reminder>"}],
    }
