"""Masking secrets in exported text, tool inputs and tool outputs.

Shapes of the credentials people paste into agent sessions, as the maintained secret scanners (gitleaks'
default rules, detect-secrets' plugins) describe them: provider keys (OpenAI, Anthropic, Google, GitHub,
GitLab, AWS access and secret keys, Slack, Stripe, npm, PyPI, Hugging Face, SendGrid, Twilio, Azure storage
connection strings), JWTs, bearer tokens, PEM private keys, passwords in URLs and in ``key=value``
assignments, e-mail addresses; plus values under keys that name a secret (``password``, ``apiKey``,
``authorization``, ...). A match becomes ``[REDACTED:<what>]`` so a reader knows something was there.
Structure is never masked: ids, tool names, part types and media bytes pass through, so an export stays a
valid history. Pure: no I/O, no state.

The rules run on RE2, whose matching time is linear in the text whatever the pattern: a backtracking engine
spent quadratic time on texts such as ``"eyJ-" * 100000`` (any reader can store one), and bounding every run
by hand only lowers the constant. detect-secrets is not used as a library: it scans lines, several of its
patterns need look-around (which RE2 refuses) or backtrack quadratically, and it misses Hugging Face, bare
npm tokens and unquoted AWS secret keys. All rules are one alternation, so a text is scanned once.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import re2  # type: ignore[import-untyped]

from app.engine.persisted import Content

_SURROGATE = re.compile("[\ud800-\udfff]")
_SPLIT = re.compile("([\ud800-\udfff])")


@dataclass(frozen=True, slots=True)
class Rule:
    """A secret's shape. With a ``(?P<secret>...)`` group only that part is masked (the key name, the URL
    around a password, the ``Bearer`` scheme stay); without one the whole match is."""

    label: str
    pattern: str


_ASSIGNED = r"""\s*["']?\s*[:=]\s*["']?"""
"""Between a secret's name and its value: ``=``, ``: ``, ``": "``."""

# Order decides between rules that match at the same place: the more specific first.
RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        r"(?s:-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z))",
    ),
    # user:password@host; before the e-mail rule, which would read ``password@host`` as an address.
    Rule("password", r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s:/@]{1,256}:(?P<secret>[^\s@/]{1,256})@"),
    Rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{16,}"),
    Rule("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    Rule("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    Rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    Rule("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    Rule(
        "gitlab-token",
        r"\b(?:(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_-]{20,}"
        r"|GR1348941[A-Za-z0-9_-]{20,})",
    ),
    Rule("aws-access-key", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    Rule(
        "aws-secret-key",
        r"(?i:\b(?:aws_?)?secret_?access_?key)" + _ASSIGNED + r"(?P<secret>[A-Za-z0-9/+=]{40})\b",
    ),
    Rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    Rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    Rule("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    Rule("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}\b"),
    Rule("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
    Rule("twilio-key", r"\bSK[0-9a-fA-F]{32}\b"),
    Rule("azure-storage-key", r"\b(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"),
    Rule("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    Rule("bearer-token", r"(?i:\bbearer\s+)(?P<secret>[A-Za-z0-9._~+/=-]{8,})"),
    Rule(
        "secret",
        r"(?i:\b(?:[a-z0-9_]*_)?(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|"
        r"client[_-]?secret|private[_-]?key)\b)" + _ASSIGNED + r"(?P<secret>[^\s\"',;]{4,})",
    ),
    Rule("email", r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b"),
)


def _combined(rules: Sequence[Rule]) -> Any:
    """One RE2 alternation; rule ``i`` is group ``r{i}`` and its secret part, if any, ``s{i}``."""
    alternatives = [
        f"(?P<r{index}>{rule.pattern.replace('(?P<secret>', f'(?P<s{index}>')})" for index, rule in enumerate(rules)
    ]
    options = re2.Options()
    options.max_mem = 64 << 20
    return re2.compile("|".join(alternatives), options)


_SECRETS = _combined(RULES)
_RULE_OF_GROUP: dict[int, tuple[Rule, int | None]] = {
    _SECRETS.groupindex[f"r{index}"]: (rule, _SECRETS.groupindex.get(f"s{index}")) for index, rule in enumerate(RULES)
}
"""Each rule by its group's number, with its secret part's (this RE2 binding takes numbers, not names)."""
_MASKS = {rule.label: f"[REDACTED:{rule.label}]".encode() for rule in RULES}
"""What each rule's match (or secret part) becomes, as the UTF-8 the text is matched in."""

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
        "secretaccesskey",
        "secret_access_key",
        "aws_secret_access_key",
        "token",
    }
)
"""Keys whose string value is a secret whatever it looks like (compared lower-case, ``-`` read as ``_``)."""

STRUCTURAL_KEYS = frozenset({"type", "toolCallId", "toolName", "approvalId", "mediaType", "image", "data"})
"""Keys never masked: ids and types keep the history valid, media bytes are not text."""


def redact_text(text: str) -> str:
    if not text.isascii() and _SURROGATE.search(text):
        # RE2 reads UTF-8, which cannot hold an unpaired surrogate: the pieces between them are redacted
        # (no secret's shape holds one) and the surrogates kept where they were.
        return "".join(piece if _SURROGATE.fullmatch(piece) else redact_text(piece) for piece in _SPLIT.split(text))
    # Matched on the text's UTF-8, which RE2 reads either way: given bytes, the binding hands each match's
    # spans over as they are, where given a str it maps every group's span back to characters, which was
    # most of the time of a text full of matches. A match never splits a character, so the result decodes.
    redacted: bytes = _SECRETS.sub(_mask, text.encode())
    return redacted.decode()


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


def _mask(match: Any) -> bytes:
    rule, secret = _matched_rule(match)
    if secret is None:
        return _MASKS[rule.label]
    whole: bytes = match.group(0)
    offset = match.start(0)
    value = whole[match.start(secret) - offset : match.end(secret) - offset]
    # ``OPENAI_API_KEY=sk-...`` says more as an OpenAI key than as a secret assignment.
    shape = _SECRETS.fullmatch(value)
    label = _matched_rule(shape)[0].label if shape is not None else rule.label
    return whole[: match.start(secret) - offset] + _MASKS[label] + whole[match.end(secret) - offset :]


def _matched_rule(match: Any) -> tuple[Rule, int | None]:
    """The rule whose group matched: the outermost group that ends last (``lastindex``), since only one
    rule's group takes part in a match and its secret part, nested in it, ends no later. One walk of the
    spans: asking each rule's group for its start costs the binding a call of its own per group."""
    return _RULE_OF_GROUP[match.lastindex]
