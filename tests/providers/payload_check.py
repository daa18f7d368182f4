"""Every check a payload must pass, short of sending it: the provider's published types and its rules.

The ai-sdk target's types are checked by the ``ai`` package itself (the ``ai_sdk_preflight`` fixture); its
rules are checked here like every other provider's.
"""

from typing import Any

from tests.providers import rules, sdk_types


def problems(provider: str, payload: dict[str, Any], *, model: str = "", prefill: bool = False) -> list[str]:
    """``prefill``: the request asked to end on the assistant's turn (only Anthropic's formats take that)."""
    found = sdk_types.SDK_CHECKS[provider](payload) if provider in sdk_types.SDK_CHECKS else []
    found += rules.sendable_text(provider, payload)
    match provider:
        case "gemini":
            return found + rules.gemini(payload, model=model)
        case "anthropic":
            return found + rules.anthropic(payload, prefill=prefill)
        case "ai-sdk":
            return found + rules.ai_sdk(payload, prefill=prefill)
        case _:
            return found + rules.RULES[provider](payload)
