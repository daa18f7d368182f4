"""Masking secrets in exported text, tool inputs and tool outputs.

Patterns for the credentials people actually paste into agent sessions (OpenAI, Anthropic, Google, GitHub,
AWS, Slack, Stripe keys; JWTs; bearer tokens; PEM private keys; passwords in URLs and in ``key=value``
assignments; e-mail addresses), plus values under keys that name a secret (``password``, ``apiKey``,
``authorization``, ...). A match becomes ``[REDACTED:<what>]`` so a reader knows something was there.
Structure is never masked: ids, tool names, part types and media bytes pass through, so an export stays a
valid history. Pure: no I/O, no state.
"""

import re
from collections.abc import Callable
from typing import Any

from app.engine.persisted import Content

# Every open-ended run is bounded where a pattern can start at many places (e-mail, URL): unbounded, a long
# run of dotted words costs quadratic time, and tool outputs are long.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")),
    (
        "email",
        re.compile(r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b"),
    ),
)

_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_URL_PASSWORD = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s:/@]{1,256}:)[^\s@/]{1,256}(@)")
_ASSIGNMENT = re.compile(
    r"(?i)\b((?:[a-z0-9_]*_)?(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|"
    r"client[_-]?secret|private[_-]?key)\b\s*[:=]\s*[\"']?)([^\s\"',;]{4,})"
)

SECRET_KEYS = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "apikey",
        "api_key",
        "accesstoken",
        "access_token",
        "refreshtoken",
        "refresh_token",
        "authorization",
        "clientsecret",
        "client_secret",
        "privatekey",
        "private_key",
        "token",
    }
)
"""Keys whose string value is a secret whatever it looks like (compared lower-case, ``-`` read as ``_``)."""

STRUCTURAL_KEYS = frozenset({"type", "toolCallId", "toolName", "approvalId", "mediaType", "image", "data"})
"""Keys never masked: ids and types keep the history valid, media bytes are not text."""


def redact_text(text: str) -> str:
    # URL passwords first: ``user:pass@host`` would otherwise read as an e-mail address.
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}[REDACTED:password]{m.group(2)}", text)
    for label, pattern in _PATTERNS:
        text = pattern.sub(_mask(label), text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}[REDACTED:bearer-token]", text)
    return _ASSIGNMENT.sub(
        lambda m: m.group(0) if "[REDACTED" in m.group(2) else f"{m.group(1)}[REDACTED:secret]", text
    )


def redact_value(value: Any) -> Any:
    """Every string inside a JSON-like value masked; values under secret-named keys masked whole."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, dict):
        return {key: _redact_entry(key, item) for key, item in value.items()}
    return value


def redact_content(content: Content) -> Content:
    if isinstance(content, str):
        return redact_text(content)
    return [redact_value(part) for part in content]


def _redact_entry(key: str, value: Any) -> Any:
    if key in STRUCTURAL_KEYS:
        return value
    if isinstance(value, str) and key.lower().replace("-", "_") in SECRET_KEYS and value:
        return "[REDACTED:secret]"
    return redact_value(value)


def _mask(label: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: f"[REDACTED:{label}]"
