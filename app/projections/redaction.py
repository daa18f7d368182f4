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
from dataclasses import dataclass
from typing import Any

import re2

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


def _options() -> Any:
    options = re2.Options()
    options.max_mem = 64 << 20
    return options


def _bare(pattern: str) -> str:
    """A rule's pattern with its secret part's group made non-capturing."""
    return pattern.replace("(?P<secret>", "(?:")


_BEFORE_MORE_TEXT = "(?s:.)(?:{})(?s:.)"
_AT_TEXT_END = "(?s:.)(?:{})"
"""How a rule is matched on the bytes of one match: a character stands for the text before the match, and one
for the text after it unless the match ends the text. The rules look past a match only through ``\\b``, which
reads whether the character either side is a word character, and ``\\z``, the text's end."""


def _rule_set(template: str) -> Any:
    """An RE2 set of every rule, in order, each written into ``template``, that says which match a whole text."""
    rules = re2.Set.FullMatchSet(_options())
    for rule in RULES:
        rules.Add(template.format(_bare(rule.pattern)))
    rules.Compile()
    return rules


_FIND = re2.compile("|".join(f"(?:{_bare(rule.pattern)})" for rule in RULES), _options())
"""Every rule in one alternation, so a text is scanned once. It has no capturing group: RE2 then finds each
match with its DFA alone, where a capturing group sends every match through a slower engine for the group's
span (about three times the time of a text full of matches)."""
_RULE_IN_TEXT = _rule_set(_BEFORE_MORE_TEXT)
_RULE_AT_END = _rule_set(_AT_TEXT_END)
_SHAPE = _rule_set("{}")
_SECRET_PART = {
    index: (re2.compile(_BEFORE_MORE_TEXT.format(rule.pattern)), re2.compile(_AT_TEXT_END.format(rule.pattern)))
    for index, rule in enumerate(RULES)
    if "(?P<secret>" in rule.pattern
}
"""Each rule with a secret part, with its one group, as the sets match it: before more text, at the text's end
(indexed by whether the match ends the text). One rule's program is small enough to give a group's span
cheaply."""
_MASKS = [f"[REDACTED:{rule.label}]".encode() for rule in RULES]
"""What each rule's match (or secret part) becomes, as the UTF-8 the text is matched in."""
_WORD = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
"""The bytes ``\\b`` reads as word characters (RE2's are ASCII only)."""
_UNKNOWN = next(index for index, rule in enumerate(RULES) if rule.label == "secret")
"""The rule whose mask a match no rule fits would take (never seen): the plain secret's, on the whole match."""

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
    # span over as it is, where given a str it maps spans back to characters. A match never splits a
    # character, so the result decodes.
    data = text.encode()
    pieces: list[bytes] = []
    copied = 0
    for match in _FIND.finditer(data):
        start, end = match.span()
        pieces += (data[copied:start], _masked(data, start, end))
        copied = end
    if not pieces:
        return text
    pieces.append(data[copied:])
    return b"".join(pieces).decode()


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


def _masked(data: bytes, start: int, end: int) -> bytes:
    """What the match ``data[start:end]`` becomes: the mask of the rule that matched, on its secret part only
    when the rule has one.

    Which rule matched: at the leftmost place where any rule matches, the alternation takes the first rule in
    order that matches there, and the match is that rule's. So that rule fits the span exactly and no rule
    before it matches there at all: it is the first rule to fit the span exactly, which a set of the rules
    tells in one call, given the span and what the rules can see of the text around it."""
    before = b"a" if start and data[start - 1] in _WORD else b" "
    ends_text = end == len(data)
    probe = before + data[start:end] + (b"" if ends_text else b"a" if data[end] in _WORD else b" ")
    matched = (_RULE_AT_END if ends_text else _RULE_IN_TEXT).Match(probe)
    if not matched:
        # Never seen: by the reasoning above a rule fits. Were it wrong, the whole match goes, the safe side.
        return _MASKS[_UNKNOWN]
    rule: int = min(matched)
    if rule not in _SECRET_PART:
        return _MASKS[rule]
    whole = _SECRET_PART[rule][ends_text].fullmatch(probe)
    secret: tuple[int, int] = whole.span(1)
    secret_start, secret_end = secret
    value = probe[secret_start:secret_end]
    # ``OPENAI_API_KEY=sk-...`` says more as an OpenAI key than as a secret assignment.
    shape = _SHAPE.Match(value)
    mask = _MASKS[min(shape) if shape else rule]
    return probe[1:secret_start] + mask + probe[secret_end : len(probe) - (0 if ends_text else 1)]
