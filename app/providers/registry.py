"""The provider registry: one adapter per target name, and ``build_payload``, the one way to call them.

``build_payload`` settles the conversation (the repairs every provider needs) and hands it to the named
provider's adapter. It never does I/O and never decides which messages go in.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from app.projections.types import Repair
from app.providers.ai_sdk import to_ai_sdk
from app.providers.anthropic import to_anthropic
from app.providers.chat_message import ChatMessage
from app.providers.conversation import Settled, settle_in_passes
from app.providers.errors import InvalidMaxOutputTokens, InvalidModel, UnknownProvider
from app.providers.gemini import to_gemini
from app.providers.openai_chat import to_openai_chat
from app.providers.openai_responses import to_openai_responses
from app.providers.prefill import check_prefill, prefilled
from app.providers.request_settings import NO_SETTINGS, RequestSettings
from app.providers.tool_definitions import ToolDefinition, parse_tools

Adapter = Callable[..., tuple[dict[str, Any], list[Repair]]]
"""``adapter(settled, *, model, tools, max_output_tokens, settings) -> (payload, repairs)``."""

ADAPTERS: Mapping[str, Adapter] = {
    "openai": to_openai_chat,
    "openai-responses": to_openai_responses,
    "anthropic": to_anthropic,
    "gemini": to_gemini,
    "ai-sdk": to_ai_sdk,
}
SUPPORTED_PROVIDERS: tuple[str, ...] = tuple(ADAPTERS)
REFERENCE_TARGETS: frozenset[str] = frozenset({"ai-sdk"})
"""Targets whose ``model`` is a whole ``provider/modelId`` reference (the AI SDK's form), not the id alone: the
provider it names is the one the reasoning rule matches producers against."""


def adapter_for(provider: str) -> Adapter:
    try:
        return ADAPTERS[provider]
    except KeyError:
        raise UnknownProvider(provider, SUPPORTED_PROVIDERS) from None


def build_payload(
    provider: str,
    chat_messages: Sequence[ChatMessage],
    *,
    model: str,
    tools: Sequence[Mapping[str, Any]] | tuple[ToolDefinition, ...] | None = None,
    max_output_tokens: int | None = None,
    settings: RequestSettings = NO_SETTINGS,
) -> tuple[dict[str, Any], list[Repair]]:
    """The exact request body ``provider`` accepts for these messages, and every repair made to get it.

    System text travels in the messages: a leading ``system`` ChatMessage is the system prompt (the serializer
    puts the request's prompt there), later ones are notes each adapter places as its provider allows.
    ``settings``: the reasoning effort, structured output and prefill the request asks for.
    """
    built = build_settled(
        provider, chat_messages, model=model, tools=tools, max_output_tokens=max_output_tokens, settings=settings
    )
    return built.payload, [repair for found in built.settle_repairs for repair in found] + built.adapter_repairs


class SettledPayload(NamedTuple):
    payload: dict[str, Any]
    settle_repairs: tuple[list[Repair], ...]
    """Pass by pass (``settle_in_passes``)."""
    adapter_repairs: list[Repair]
    settled: Settled


def build_settled(
    provider: str,
    chat_messages: Sequence[ChatMessage],
    *,
    model: str,
    tools: Sequence[Mapping[str, Any]] | tuple[ToolDefinition, ...] | None = None,
    max_output_tokens: int | None = None,
    settings: RequestSettings = NO_SETTINGS,
    continues: bool = False,
) -> SettledPayload:
    """``build_payload``, with the settled conversation the payload was made from (what it made up at its end
    decides how much of the payload is settled for the prompt cache), and the repairs of each step apart.
    ``continues``: the messages follow a start built apart (``Settled.opens_conversation``)."""
    adapter = adapter_for(provider)
    check_model(model)
    check_max_output_tokens(max_output_tokens)
    check_prefill(provider, model, settings)
    definitions = _definitions(tools)
    settled, passes = settle_in_passes(chat_messages, prefill=settings.prefill)
    if settings.prefill:
        settled = prefilled(settled, passes[-1])
    if continues:
        settled = replace(settled, opens_conversation=False)
    payload, adapter_repairs = adapter(
        settled, model=model, tools=definitions, max_output_tokens=max_output_tokens, settings=settings
    )
    return SettledPayload(payload, passes, adapter_repairs, settled)


def check_model(model: object) -> None:
    if not isinstance(model, str) or not model.strip():
        raise InvalidModel(model)


def check_max_output_tokens(value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidMaxOutputTokens(value)


def _definitions(
    tools: Sequence[Mapping[str, Any]] | tuple[ToolDefinition, ...] | None,
) -> tuple[ToolDefinition, ...]:
    if tools and all(isinstance(tool, ToolDefinition) for tool in tools):
        return tuple(tools)  # type: ignore[arg-type]
    return parse_tools(tools)  # type: ignore[arg-type]


__all__ = [
    "ADAPTERS",
    "REFERENCE_TARGETS",
    "SUPPORTED_PROVIDERS",
    "Settled",
    "adapter_for",
    "build_payload",
    "build_settled",
]
