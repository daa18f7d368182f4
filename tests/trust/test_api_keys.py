"""API key configuration: secrets are hashed as soon as they are read, either form works, and a malformed list
fails at start with a message that names the entry, never the secret."""

import hashlib
from pathlib import Path

import orjson
import pytest
from pydantic import SecretStr

from app.api.auth import ApiKeyConfigError, AuthenticationRequired, Authenticator, load_api_keys, parse_api_keys
from app.settings import Settings
from tests.trust.keys import API_KEYS, OTHER_TENANT, READER, RUNTIME, WRITER


def test_plaintext_keys_are_kept_only_as_sha256_digests() -> None:
    keys = parse_api_keys(orjson.dumps(API_KEYS).decode(), "test")
    assert keys[0].digest == hashlib.sha256(READER.encode()).digest()
    assert all(READER not in repr(key) and READER.encode() not in key.digest for key in keys)


def test_each_key_resolves_to_its_tenant_and_role() -> None:
    authenticator = Authenticator(parse_api_keys(orjson.dumps(API_KEYS).decode(), "test"))
    assert authenticator.enabled
    seen = {secret: authenticator.identify(f"Bearer {secret}") for secret in (READER, WRITER, RUNTIME, OTHER_TENANT)}
    assert [(p.tenant_id, p.role) for p in seen.values()] == [
        ("acme", "reader"),
        ("acme", "writer"),
        ("acme", "runtime"),
        ("globex", "runtime"),
    ]
    assert authenticator.identify(f"bearer   {WRITER}  ").role == "writer"


@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer ", "Basic " + READER, READER, "Bearer wrong-key"])
def test_missing_malformed_or_unknown_keys_are_refused(header: str | None) -> None:
    authenticator = Authenticator(parse_api_keys(orjson.dumps(API_KEYS).decode(), "test"))
    with pytest.raises(AuthenticationRequired) as raised:
        authenticator.identify(header)
    assert raised.value.challenge.startswith('Bearer realm="projector"')


def test_no_keys_means_auth_is_off_and_every_caller_is_the_local_runtime() -> None:
    authenticator = Authenticator(load_api_keys(Settings(database_url=None)))
    assert not authenticator.enabled
    assert authenticator.identify(None).role == "runtime"


def test_keys_come_from_a_file_as_well(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(orjson.dumps(API_KEYS[:2]).decode())
    keys = load_api_keys(Settings(database_url=None, api_keys_file=path))
    assert [key.role for key in keys] == ["reader", "writer"]


@pytest.mark.parametrize(
    "entries",
    [
        [{"key": "a-long-enough-secret-1", "tenant": "t", "role": "admin"}],
        [{"key": "short", "tenant": "t", "role": "reader"}],
        [{"key": "a-long-enough-secret-1", "sha256": "0" * 64, "tenant": "t", "role": "reader"}],
        [{"tenant": "t", "role": "reader"}],
        [{"key": "a-long-enough-secret-1", "tenant": "", "role": "reader"}],
        [{"sha256": "not-hex", "tenant": "t", "role": "reader"}],
        [{"key": "a-long-enough-secret-1", "tenant": "t", "role": "reader"}] * 2,
    ],
)
def test_a_malformed_key_list_fails_at_start_without_echoing_secrets(entries: list[dict[str, str]]) -> None:
    with pytest.raises(ApiKeyConfigError) as raised:
        parse_api_keys(orjson.dumps(entries).decode(), "PROJECTOR_API_KEYS")
    assert "a-long-enough-secret-1" not in str(raised.value)
    assert "'short'" not in str(raised.value)
    assert str(raised.value).startswith("PROJECTOR_API_KEYS")


def test_settings_keep_the_key_list_secret() -> None:
    settings = Settings(database_url=None, api_keys=SecretStr(orjson.dumps(API_KEYS).decode()))
    assert READER not in repr(settings)
    assert READER not in str(settings.model_dump())
