"""Every check a payload must pass, short of sending it: the provider's published types and its rules.

The ai-sdk target's types are checked by the ``ai`` package itself (the ``ai_sdk_preflight`` fixture); its
rules are checked here like every other provider's.
"""

from typing import Any

from tests.providers import rules, sdk_types


def problems(provider: str, payload: dict[str, Any], *, model: str = "") -> list[str]:
    found = sdk_types.SDK_CHECKS[provider](payload) if provider in sdk_types.SDK_CHECKS else []
    found += rules.sendable_text(provider, payload)
    if provider == "gemini":
        return found + rules.gemini(payload, model=model)
    return found + rules.RULES[provider](payload)
