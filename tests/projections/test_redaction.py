"""Secrets are masked in text, tool inputs and tool outputs; structure is never touched."""

import time
from typing import Any

import pytest

from app.projections.redaction import redact_content, redact_text, redact_value

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
]


@pytest.mark.parametrize(("secret", "label"), SECRETS)
def test_known_credential_shapes_are_masked_with_their_label(secret: str, label: str) -> None:
    masked = redact_text(f"before {secret} after")
    assert masked == f"before [REDACTED:{label}] after"


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


def test_non_string_values_pass_through() -> None:
    assert redact_value({"exitCode": 1, "ok": True, "none": None}) == {"exitCode": 1, "ok": True, "none": None}


def test_redaction_of_long_tool_output_takes_linear_time() -> None:
    # Unbounded e-mail and URL patterns took over ten seconds on this; bounded, it is milliseconds.
    started = time.perf_counter()
    redact_text("a." * 20_000 + "a-" * 20_000)
    assert time.perf_counter() - started < 2
