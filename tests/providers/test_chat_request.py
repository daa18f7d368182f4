import pytest

from app.projections.types import Diagnostics, Projection, Repair, View
from app.providers.chat_request import build_chat_request
from app.providers.errors import EmptyConversation, InvalidToolDefinition, UnknownProvider
from tests.builders import reasoning, tool_call, user
from tests.providers.projected import raw


def test_pipeline_returns_provider_model_payload_and_diagnostics() -> None:
    projection = Projection(View.MODEL, raw(user("hi")), Diagnostics(repairs=[Repair("from-view", "kept")]))
    request = build_chat_request(projection, provider="openai", model="gpt-5", system="Be brief.")
    assert (request.provider, request.model) == ("openai", "gpt-5")
    assert request.payload == {
        "model": "gpt-5",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        ],
    }
    assert [repair.rule for repair in request.diagnostics.repairs] == ["from-view"]


def test_projected_messages_without_a_projection_are_accepted() -> None:
    request = build_chat_request(raw(user("hi")), provider="gemini", model="gemini-2.5-pro")
    assert request.payload == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def test_every_repair_is_reported() -> None:
    request = build_chat_request(
        raw(user("go"), tool_call("functions.Read:0", "Read")), provider="anthropic", model="m"
    )
    rules = [repair.rule for repair in request.diagnostics.repairs]
    assert {"interrupted-tool-call", "tool-call-id", "tools-required"} <= set(rules)


def test_bad_input_is_refused_before_any_work() -> None:
    with pytest.raises(UnknownProvider):
        build_chat_request(raw(user("hi")), provider="mistral", model="m")
    with pytest.raises(InvalidToolDefinition):
        build_chat_request(raw(user("hi")), provider="openai", model="m", tools=[{"name": "bad name"}])


def test_nothing_at_all_to_send_is_refused() -> None:
    with pytest.raises(EmptyConversation):
        build_chat_request([], provider="openai", model="m")


def test_a_system_prompt_alone_is_a_valid_request() -> None:
    request = build_chat_request([], provider="anthropic", model="m", system="You are a helper.")
    assert request.payload["system"] == "You are a helper."
    assert request.payload["messages"][0]["role"] == "user"


def test_signed_reasoning_reaches_only_its_own_provider() -> None:
    history = raw(user("q"), reasoning("thinking hard", answer="42"), user("thanks"))
    anthropic = build_chat_request(history, provider="anthropic", model="claude-sonnet-4-5").payload
    openai = build_chat_request(history, provider="openai", model="gpt-5").payload
    gemini = build_chat_request(history, provider="gemini", model="gemini-2.5-pro").payload
    assert anthropic["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "thinking hard",
        "signature": "sig-abc",
    }
    assert openai["messages"][1] == {"role": "assistant", "content": "42"}
    assert gemini["contents"][1] == {"role": "model", "parts": [{"text": "42"}]}


def test_absent_tools_and_mutations_are_the_same_as_empty_ones() -> None:
    bare = build_chat_request(raw(user("hi")), provider="openai", model="gpt-5", tools=None, mutations=None)
    empty = build_chat_request(raw(user("hi")), provider="openai", model="gpt-5", tools=[], mutations=[])
    assert bare.payload == empty.payload
