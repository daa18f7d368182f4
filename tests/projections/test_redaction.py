"""Secrets are masked in text, tool inputs and tool outputs; structure is never touched."""

import subprocess
import sys
from typing import Any

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from app.projections.redaction import RULES, redact_content, redact_text, redact_value

SECRETS = [
    ("sk-proj-" + "A1b2" * 10, "openai-key"),
    ("sk-" + "a1B2c3D4" * 4, "openai-key"),
    ("sk-ant-api03-" + "x9" * 20, "anthropic-key"),
    ("AIza" + "S" * 35, "google-api-key"),
    ("ghp_" + "a" * 36, "github-token"),
    ("gho_" + "b" * 36, "github-token"),
    ("github_pat_" + "11ABCDEFG" * 4, "github-token"),
    ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("xoxb-123456789012-abcdefABCDEF", "slack-token"),
    ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "jwt"),
    ("alice@example.com", "email"),
    ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key"),
    ("npm_" + "a1B2c3D4e5" * 3 + "F6g7H8", "npm-token"),
    ("hf_" + "AbCdEfGhIj" * 3 + "KlMn", "huggingface-token"),
    ("glpat-" + "xY1_zW2-vU3" * 2, "gitlab-token"),
    ("SG." + "a" * 22 + "." + "B" * 43, "sendgrid-key"),
    ("SK" + "0123456789abcdef" * 2, "twilio-key"),
    ("pypi-AgEIcHlwaS5vcmc" + "Q" * 60, "pypi-token"),
]


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
NAMED_SECRETS = [
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = ", "aws-secret-key"),
    (f'"AWS_SECRET_ACCESS_KEY": "{AWS_SECRET}"', '"AWS_SECRET_ACCESS_KEY": "', "aws-secret-key"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + "Ab1+" * 22 + "==;EndpointSuffix=core",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=",
        "azure-storage-key",
    ),
]


@pytest.mark.parametrize(("secret", "label"), [pair for pair in SECRETS if pair[1] != "aws-secret-key"])
def test_known_credential_shapes_are_masked_with_their_label(secret: str, label: str) -> None:
    masked = redact_text(f"before {secret} after")
    assert masked == f"before [REDACTED:{label}] after"


@pytest.mark.parametrize(("text", "kept", "label"), NAMED_SECRETS)
def test_secrets_known_by_their_name_are_masked_and_the_name_kept(text: str, kept: str, label: str) -> None:
    masked = redact_text(f"{text}\n")
    assert masked.startswith(f"{kept}[REDACTED:{label}]")
    assert "EXAMPLEKEY" not in masked and "Ab1+" not in masked


def test_a_40_character_string_is_not_an_aws_secret_without_its_name() -> None:
    text = "commit wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert redact_text(text) == text


def test_a_named_secret_holding_a_known_shape_is_labelled_by_the_shape() -> None:
    assert redact_text("OPENAI_API_KEY=sk-proj-" + "A1b2" * 10) == "OPENAI_API_KEY=[REDACTED:openai-key]"
    assert redact_text("Authorization: Bearer ghp_" + "a" * 36) == "Authorization: Bearer [REDACTED:github-token]"


def test_bearer_token_is_masked_but_the_scheme_kept() -> None:
    assert redact_text("Authorization: Bearer abc.def-123_xyz") == "Authorization: Bearer [REDACTED:bearer-token]"


def test_pem_private_key_is_masked_whole_even_when_cut_off() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"key:\n{key}\ndone") == "key:\n[REDACTED:private-key]\ndone"
    assert redact_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r") == "[REDACTED:private-key]"


def test_password_in_a_url_is_masked_and_the_rest_of_the_url_kept() -> None:
    assert redact_text("postgres://app:hunter2@db:5432/x") == "postgres://app:[REDACTED:password]@db:5432/x"
    assert redact_text("https://u:p4ss@example.com/") == "https://u:[REDACTED:password]@example.com/"


def test_secret_assignments_are_masked() -> None:
    assert redact_text("DB_PASSWORD=correct-horse") == "DB_PASSWORD=[REDACTED:secret]"
    assert redact_text('client_secret: "abcd1234"') == 'client_secret: "[REDACTED:secret]"'


def test_ordinary_prose_is_left_alone() -> None:
    text = "The password policy needs 12 characters; see docs/skills.md and ask-the-team."
    assert redact_text(text) == text


def test_tool_inputs_and_outputs_are_masked_but_ids_and_media_bytes_are_not() -> None:
    content: list[dict[str, Any]] = [
        {"type": "tool-call", "toolCallId": "c1", "toolName": "Bash", "input": {"cmd": "curl -H 'Bearer abcdefgh123'"}},
        {
            "type": "tool-result",
            "toolCallId": "c1",
            "toolName": "Bash",
            "output": {"type": "json", "value": {"apiKey": "plainlooking", "nested": ["mail bob@corp.io"]}},
        },
        {"type": "image", "image": "AKIAIOSFODNN7EXAMPLE", "mediaType": "image/png"},
    ]
    masked = redact_content(content)
    assert isinstance(masked, list)
    assert masked[0]["input"] == {"cmd": "curl -H 'Bearer [REDACTED:bearer-token]'"}
    assert masked[0]["toolCallId"] == "c1"
    assert masked[1]["output"]["value"] == {"apiKey": "[REDACTED:secret]", "nested": ["mail [REDACTED:email]"]}
    assert masked[2] == content[2]


def test_secrets_among_characters_of_several_bytes_are_masked_and_every_character_kept() -> None:
    """Matching runs on the text's UTF-8: the masks land on the secrets, not some bytes beside them."""
    key = "sk-ant-api03-" + "x9" * 20
    text = f"café ☕ clé {key}, envoyé à alice@example.com 😀 fin"
    expected = "café ☕ clé [REDACTED:anthropic-key], envoyé à [REDACTED:email] 😀 fin"
    assert redact_text(text) == expected
    assert redact_text(f"\ud83d{text}\udc00") == f"\ud83d{expected}\udc00"


def test_non_string_values_pass_through() -> None:
    assert redact_value({"exitCode": 1, "ok": True, "none": None}) == {"exitCode": 1, "ok": True, "none": None}


ADVERSARIAL_SEEDS = {
    "private-key": ["-----BEGIN PRIVATE KEY-----", "-----BEGIN A B C "],
    "password": ["a://b:", "ab://" + "c" * 40 + ":"],
    "anthropic-key": ["sk-ant-", "sk-ant-a-"],
    "openai-key": ["sk-", "sk-proj-a"],
    "stripe-key": ["sk_live_", "rk_test_a "],
    "google-api-key": ["AIza", "AIzaAAAA-"],
    "github-token": ["ghp_", "github_pat_a-"],
    "gitlab-token": ["glpat-", "GR1348941a "],
    "aws-access-key": ["AKIA", "ASIAABC "],
    "aws-secret-key": ["aws_secret_access_key=", "secret_access_key = 'a"],
    "slack-token": ["xoxb-", "xoxp-a "],
    "npm-token": ["npm_", "npm_a"],
    "pypi-token": ["pypi-AgE", "pypi-AgEa."],
    "huggingface-token": ["hf_", "hf_a"],
    "sendgrid-key": ["SG.", "SG.aaaa."],
    "twilio-key": ["SK", "SK0a"],
    "azure-storage-key": ["AccountKey=", "SharedAccessKey=a"],
    "jwt": ["eyJ-", "eyJaaaaa.eyJ"],
    "bearer-token": ["bearer ", "Bearer\t"],
    "secret": ["password=", "x_api_key: '"],
    "email": ["a@", "a.", "a-", "a@b.", "a@b-"],
}
"""For each rule, text that starts a match again and again without finishing one: the shape on which a
backtracking engine restarts the same scan at every position (``"eyJ-" * 100000`` took 40 s)."""


def test_every_rule_has_adversarial_inputs() -> None:
    assert set(ADVERSARIAL_SEEDS) == {rule.label for rule in RULES}


def test_redaction_takes_linear_time_on_adversarial_text() -> None:
    """Each seed repeated to a megabyte: linear matching finishes all of them in a few seconds here, while a
    quadratic pattern would need minutes on any one of them, so the generous timeout cannot be reached by a
    slow machine, only by quadratic work. A subprocess, so a runaway match can be stopped."""
    script = (
        "import sys\n"
        "from app.projections.redaction import redact_text\n"
        f"for seed in {sorted({seed for seeds in ADVERSARIAL_SEEDS.values() for seed in seeds})!r}:\n"
        "    text = seed * (1_000_000 // len(seed))\n"
        "    redact_text(text)\n"
        "    redact_text('x ' + text + ' tail')\n"
    )
    try:
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("redaction did not finish a megabyte of adversarial text in 120 s: a pattern is not linear")


def test_the_probe_that_stalled_the_server_is_masked_nowhere_and_kept_whole() -> None:
    text = "eyJ-" * 100_000
    assert redact_text(text) == text


GROUPED = re2.compile(
    "|".join(f"(?P<r{i}>{rule.pattern.replace('(?P<secret>', f'(?P<s{i}>')})" for i, rule in enumerate(RULES))
)
"""Every rule a group of one alternation, and each rule's ``secret`` part a group of its own."""
RULE_OF_GROUP = {GROUPED.groupindex[f"r{i}"]: i for i in range(len(RULES))}


def one_alternation(text: str) -> str:
    """Redaction as its rules define it, written the plain way: the group that took part in a match of
    ``GROUPED`` names its rule, and the rule's ``secret`` group its secret part, which the shape it fits whole
    labels when it fits one. What ``redact_text`` must give, found differently."""

    def label(match: Any) -> str:
        return RULES[RULE_OF_GROUP[match.lastindex]].label

    def mask(match: Any) -> str:
        rule = RULE_OF_GROUP[match.lastindex]
        secret = GROUPED.groupindex.get(f"s{rule}")
        if secret is None:
            return f"[REDACTED:{RULES[rule].label}]"
        whole: str = match.group(0)
        offset: int = match.start(0)
        value = match.group(secret)
        shape = GROUPED.fullmatch(value)
        masked = f"[REDACTED:{label(shape) if shape is not None else RULES[rule].label}]"
        return whole[: match.start(secret) - offset] + masked + whole[match.end(secret) - offset :]

    redacted: str = GROUPED.sub(mask, text)
    return redacted


PIECES = sorted(
    {secret for secret, _ in SECRETS}
    | {text for text, _, _ in NAMED_SECRETS}
    | {seed for seeds in ADVERSARIAL_SEEDS.values() for seed in seeds}
    | {" ", "\n", "=", ": ", "'", '"', "@", ".", "-", "_", "/", ":", ";", "a", "Z", "9", "x_", "é", "日本", "😀"}
    | {"Bearer ", "https://", "user:", "@host", "-----END PRIVATE KEY-----", "AccountKey=", "OPENAI_API_KEY="}
    | {"secret=", "token: ", "example.com", "sk-ant-" + "b" * 20, "AKIA" + "B" * 16}
    | {"SG." + "a" * 22 + "." + "B" * 42 + "-", "aws_secret_access_key=" + "A" * 39 + "/", "me@x.io-"}
)
"""Credentials, the starts of credentials, and what may sit around them: word and non-word characters (what
``\\b`` reads), characters of several bytes, names that announce a secret, credentials that end on a character
``\\b`` reads as a boundary only before a word character."""


@settings(max_examples=400)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_redaction_masks_what_one_alternation_of_the_rules_masks(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert redact_text(text) == one_alternation(text)


def test_no_rule_looks_further_around_a_match_than_one_character_and_the_texts_end() -> None:
    """What lets a match's rule be told from the match and one character either side."""
    for rule in RULES:
        for anchor in ("^", "$", "\\A", "\\B", "(?m"):
            assert anchor not in rule.pattern.replace("[^", "["), (rule.label, anchor)
