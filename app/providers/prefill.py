"""Prefill: a payload that ends on the assistant's turn, so the model continues it instead of answering anew.

By default a trailing assistant turn gets a user turn after it (``settle``): every provider takes that. A
prefill is asked for explicitly, and only a target that continues a final assistant turn can take one:
Anthropic's Messages API (and Claude through the AI SDK), for models before Claude 4.6 and without extended
thinking. OpenAI's Chat Completions and Responses accept a final assistant message but answer it with a new
message, and Gemini answers a final model turn anew too: a prefill there would be silently ignored, so it is
refused. Pure.
"""

from app.engine.model_ref import model_ref
from app.projections.types import Repair
from app.providers.anthropic import takes_prefill
from app.providers.conversation import Settled
from app.providers.errors import PrefillRefused
from app.providers.request_settings import RequestSettings

NOT_CONTINUED = {
    "openai": "OpenAI Chat Completions answer a final assistant message with a new message instead of continuing it",
    "openai-responses": "the Responses API answers a final assistant message with a new one instead of continuing it",
    "gemini": "Gemini answers a final model turn with a new turn instead of continuing it",
}


def check_prefill(provider: str, model: str, settings: RequestSettings) -> None:
    """Raises ``PrefillRefused`` (422, naming ``prefill``) when a prefill was asked of a target that cannot
    take one; nothing otherwise."""
    if not settings.prefill:
        return
    if provider in NOT_CONTINUED:
        raise PrefillRefused(NOT_CONTINUED[provider])
    claude = model
    if provider == "ai-sdk":
        found = model_ref(model)
        if found is None or found.family != "anthropic":
            raise PrefillRefused("through the AI SDK only an Anthropic model (anthropic/...) continues a turn")
        claude = found.model or ""
    if not takes_prefill(claude):
        raise PrefillRefused(f"{claude} takes no prefill (Claude 4.6 and later end every request on a user turn)")
    if settings.effort is not None and not settings.effort.off:
        raise PrefillRefused("extended thinking takes no prefill; ask for variant none or leave prefill out")


def prefilled(settled: Settled, repairs: list[Repair]) -> Settled:
    """The conversation ending on the assistant turn to continue, as Anthropic takes it: without reasoning
    (a final turn may not hold thinking when thinking is off) and without trailing whitespace in its last
    text. Raises ``PrefillRefused`` when the conversation does not end on an assistant turn."""
    messages = settled.messages
    if not messages or messages[-1]["role"] != "assistant":
        raise PrefillRefused("the conversation does not end on an assistant turn to continue")
    last = messages[-1]
    content = [part for part in last["content"] if part["type"] != "reasoning"]
    if len(content) != len(last["content"]):
        repairs.append(Repair("prefill-reasoning", "dropped the reasoning of the turn to continue (thinking is off)"))
    if content and content[-1]["type"] == "text" and content[-1]["text"] != content[-1]["text"].rstrip():
        content[-1] = {**content[-1], "text": content[-1]["text"].rstrip()}
        repairs.append(Repair("prefill-whitespace", "removed trailing whitespace from the turn to continue"))
    if not content:
        raise PrefillRefused("the turn to continue holds nothing but reasoning")
    if content == last["content"]:
        return settled
    return Settled(settled.system, [*messages[:-1], {**last, "content": content}])
