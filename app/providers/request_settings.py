"""What a request asks of the model besides its messages: how hard to think, what shape to answer in, and
whether the answer continues a turn already begun. A run (opencode's Turn) holds the first two as ``variant``
and ``format``; ``POST /chat`` may override them and ask for a prefill (and, for Gemini, name a cached content
to continue). They are parsed here once, and each adapter writes them as its provider takes them.

``variant`` is a reasoning effort, ``none``, ``minimal``, ``low``, ``medium``, ``high``, ``xhigh`` or
``max`` (the names opencode's variants and OpenAI's ``reasoning_effort`` use), or a thinking budget in tokens
written as a number (``"8000"``). Providers that take a level get the level (a budget becomes the level it
falls in); providers that take a budget get the budget (a level becomes ``EFFORT_BUDGETS``'s figure).

``format`` is opencode's output format: ``{"type": "text"}`` (the default: nothing to ask) or
``{"type": "json_schema", "schema": {...}, "name"?, "description"?, "strict"?, "retryCount"?}``;
``retryCount`` is how often the runtime retries an answer that does not match, which no provider takes.
"""

import re
from dataclasses import dataclass
from typing import Any

from app.providers.errors import InvalidFormat, InvalidVariant

EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
EFFORT_BUDGETS: dict[str, int] = {
    "none": 0,
    "minimal": 1024,
    "low": 4000,
    "medium": 10_000,
    "high": 16_000,
    "xhigh": 24_000,
    "max": 31_999,
}
"""Thinking tokens per level, for providers that take a budget: opencode's figures (``high`` 16,000, ``max``
31,999, below the 32,000 that Claude's non-streaming requests allow) and Anthropic's 1,024 minimum."""
MAX_BUDGET = 2**31 - 1
DEFAULT_FORMAT_NAME = "response"
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_FORMAT_KEYS = frozenset({"type", "schema", "name", "description", "strict", "retryCount"})


@dataclass(frozen=True, slots=True)
class Effort:
    """A reasoning effort: a level, or a budget in tokens (exactly one is set)."""

    level: str | None = None
    budget: int | None = None

    @property
    def off(self) -> bool:
        return self.level == "none" or self.budget == 0

    def as_level(self) -> str:
        """The level, for providers that take one; a budget becomes the level whose figure it reaches."""
        if self.level is not None:
            return self.level
        budget = self.budget or 0
        return next((level for level in reversed(EFFORTS) if budget >= EFFORT_BUDGETS[level]), "none")

    def as_budget(self) -> int:
        """The budget in tokens, for providers that take one."""
        return self.budget if self.budget is not None else EFFORT_BUDGETS[self.level or "none"]


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """A structured answer: a JSON document matching ``schema`` (a JSON Schema)."""

    schema: dict[str, Any]
    name: str = DEFAULT_FORMAT_NAME
    description: str | None = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class RequestSettings:
    effort: Effort | None = None
    output: OutputFormat | None = None
    prefill: bool = False
    """End the payload on the trailing assistant turn, for the model to continue it."""
    output_limit: int | None = None
    """The model's output limit (the catalog's) where the request sets no ``maxOutputTokens``: a thinking
    budget stays under it, since an SDK that caps the answer at the limit would leave the budget past it. Not
    sent itself."""
    cached_content: str | None = None
    """A Gemini ``cachedContents/...`` name the request continues (``cache.cachedContent``): the cached content
    holds the system instruction and tools it was created with."""


NO_SETTINGS = RequestSettings()


def parse_variant(value: object) -> Effort | None:
    """The effort a ``variant`` names, or ``None`` for no variant; anything else raises ``InvalidVariant``."""
    if value is None:
        return None
    if isinstance(value, str):
        if value in EFFORTS:
            return Effort(level=value)
        if value.isascii() and value.isdigit() and int(value) <= MAX_BUDGET:
            return Effort(budget=int(value))
    raise InvalidVariant(value, EFFORTS)


def parse_format(value: object) -> OutputFormat | None:
    """The structured output a ``format`` asks for (``None``: plain text); a malformed one raises
    ``InvalidFormat`` naming what is wrong."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidFormat('must be an object such as {"type": "json_schema", "schema": {...}}')
    kind = value.get("type")
    if kind == "text":
        if set(value) != {"type"}:
            raise InvalidFormat("a text format takes no other key")
        return None
    if kind != "json_schema":
        raise InvalidFormat(f"type must be text or json_schema, got {kind!r}")
    extra = sorted(set(value) - _FORMAT_KEYS)
    if extra:
        raise InvalidFormat(f"unknown keys {', '.join(extra)}")
    schema, name = value.get("schema"), value.get("name", DEFAULT_FORMAT_NAME)
    if not isinstance(schema, dict):
        raise InvalidFormat("schema must be a JSON Schema object")
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidFormat("name must match ^[a-zA-Z0-9_-]{1,64}$")
    description, strict, retries = value.get("description"), value.get("strict"), value.get("retryCount")
    if description is not None and not isinstance(description, str):
        raise InvalidFormat("description must be a string")
    if strict is not None and not isinstance(strict, bool):
        raise InvalidFormat("strict must be true or false")
    if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or retries < 0):
        raise InvalidFormat("retryCount must be a non-negative integer")
    return OutputFormat(schema, name, description, strict)
