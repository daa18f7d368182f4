"""Settings read from the environment."""

import os
from pathlib import Path

import pytest

from app import cli
from app.settings import InvalidSettings, Settings, get_settings, settings_environment, unknown_variables


def command_with(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], environment: dict[str, str], *argv: str
) -> tuple[int | str | None, str, str]:
    """``projector *argv`` run with ``environment`` set: its exit status and what it wrote to standard
    output and standard error."""
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        with pytest.raises(SystemExit) as exit_:
            cli.main(list(argv))
    finally:
        get_settings.cache_clear()
    written = capsys.readouterr()
    return exit_.value.code, written.out, written.err


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("postgres://u:p@db:5432/x", "postgresql+asyncpg://u:p@db:5432/x"),
        ("postgresql://u@db/x", "postgresql+asyncpg://u@db/x"),
        ("postgresql+asyncpg://u@db/x", "postgresql+asyncpg://u@db/x"),
    ],
)
def test_a_plain_postgres_url_is_used_with_the_asyncpg_driver(
    monkeypatch: pytest.MonkeyPatch, given: str, used: str
) -> None:
    monkeypatch.setenv("DATABASE_URL", given)
    assert Settings().database_url == used


def test_the_prefixed_name_is_read_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROJECTOR_DATABASE_URL", "postgresql://u@db/x")
    assert Settings().database_url == "postgresql+asyncpg://u@db/x"


def test_without_a_url_the_embedded_database_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("PROJECTOR_DATABASE_URL", raising=False)
    assert Settings(_env_file=None).database_url is None


def test_read_replicas_are_a_comma_separated_list_used_with_the_asyncpg_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_READ_URL", "postgres://u@replica-1/x, postgresql://u@replica-2:5433/x")
    assert Settings().database_read_url == [
        "postgresql+asyncpg://u@replica-1/x",
        "postgresql+asyncpg://u@replica-2:5433/x",
    ]


def test_without_read_replicas_every_read_goes_to_the_primary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_READ_URL", raising=False)
    monkeypatch.delenv("PROJECTOR_DATABASE_READ_URL", raising=False)
    assert Settings(_env_file=None).database_read_url == []


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("PROJECTOR_POOL_SIZE", "-1", "PROJECTOR_POOL_SIZE: Input should be greater than or equal to 1"),
        ("PROJECTOR_PORT", "eighty", "PROJECTOR_PORT: Input should be a valid integer"),
        ("PROJECTOR_PORT", "99999", "PROJECTOR_PORT: Input should be less than or equal to 65535"),
        ("PROJECTOR_LOG_LEVEL", "verbose", "PROJECTOR_LOG_LEVEL: Input should be 'debug', 'info'"),
        ("PROJECTOR_CONTEXT_WINDOWS", "{bad", "PROJECTOR_CONTEXT_WINDOWS: not JSON: Expecting property name"),
        ("PROJECTOR_CONTEXT_WINDOWS", '{"m": "big"}', "PROJECTOR_CONTEXT_WINDOWS.m: Input should be a valid integer"),
        ("PROJECTOR_PRUNE_PROTECTED_TOOLS", "skill,bash", "PROJECTOR_PRUNE_PROTECTED_TOOLS: not JSON"),
        ("DATABASE_URL", "db.internal:5432", "PROJECTOR_DATABASE_URL or DATABASE_URL: not a URL"),
        ("DATABASE_URL", "mysql://u@db/x", "PROJECTOR_DATABASE_URL or DATABASE_URL: mysql:// is not PostgreSQL"),
        ("DATABASE_URL", "postgresql://u:S3cret/db", "PROJECTOR_DATABASE_URL or DATABASE_URL: not a URL the driver"),
        ("DATABASE_READ_URL", "postgres://u@r1/x,r2", "PROJECTOR_DATABASE_READ_URL or DATABASE_READ_URL: not a URL"),
        ("PROJECTOR_LISTEN_DATABASE_URL", "http://db/x", "PROJECTOR_LISTEN_DATABASE_URL: http:// is not PostgreSQL"),
        ("PROJECTOR_DEFAULT_PAGE_SIZE", "900", "PROJECTOR_DEFAULT_PAGE_SIZE (900) is above PROJECTOR_MAX_PAGE_SIZE"),
    ],
)
def test_an_invalid_setting_stops_the_start_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str, said: str
) -> None:
    status, _, error = command_with(monkeypatch, capsys, {variable: value}, "migrate")
    assert status == 2
    assert error.startswith("projector: invalid settings\n")
    assert said in error
    assert "Traceback" not in error and "S3cret" not in error


def test_an_invalid_setting_is_reported_without_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value may be a secret (a model server's key under a misspelt name, here), and errors reach logs."""
    monkeypatch.setenv("PROJECTOR_MODEL_SERVERS_BY_PROVIDER", '{"vllm": {"baseUrl": "http://gpu", "apikey": "sk-1"}}')
    get_settings.cache_clear()
    try:
        with pytest.raises(InvalidSettings) as raised:
            get_settings()
    finally:
        get_settings.cache_clear()
    assert str(raised.value) == "PROJECTOR_MODEL_SERVERS_BY_PROVIDER.vllm.apikey: Extra inputs are not permitted"


def test_help_needs_no_valid_settings(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = command_with(monkeypatch, capsys, {"PROJECTOR_POOL_SIZE": "-1"}, "serve", "--help")
    assert status == 0 and "usage: projector serve" in out


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("PROJECTOR_API_KEYS_FILE", "/nonexistent/keys.json", "PROJECTOR_API_KEYS_FILE: cannot read"),
        ("PROJECTOR_API_KEYS", '[{"key": "k"}]', "PROJECTOR_API_KEYS"),
    ],
)
def test_unreadable_api_keys_stop_serve_with_a_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str, said: str
) -> None:
    status, _, error = command_with(monkeypatch, capsys, {variable: value}, "serve")
    assert status == 2
    assert error.startswith("projector: invalid settings\n") and said in error
    assert "Traceback" not in error


@pytest.mark.parametrize("command", ["migrate", "serve"])
def test_a_database_that_cannot_be_reached_stops_the_start_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    unreachable = {
        "DATABASE_URL": "postgresql://projector:secret-password@127.0.0.1:1/projector",
        "PROJECTOR_CONNECT_TIMEOUT_SECONDS": "2",
    }
    status, _, error = command_with(monkeypatch, capsys, unreachable, command)
    assert status == 3
    assert error.startswith("projector: cannot reach the database at 127.0.0.1:1/projector: ")
    assert error.count("\n") == 1 and "secret-password" not in error


def test_a_misspelt_setting_is_named_with_the_one_it_resembles_and_the_command_lines_own_are_known() -> None:
    environ = {
        "PROJECTOR_POOLSIZE": "5",
        "PROJECTOR_POOL_SIZE": "5",
        "DATABASE_URL": "postgresql://x/y",
        "PROJECTOR_DATABASE_READ_URL": "",
        "PROJECTOR_URL": "http://127.0.0.1:8000",
        "PROJECTOR_API_KEY": "rt_1",
        "HOME": "/root",
    }
    assert unknown_variables(environ) == ["PROJECTOR_POOLSIZE (did you mean PROJECTOR_POOL_SIZE?)"]


def test_a_misspelt_setting_in_the_env_file_is_named_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("PROJECTOR_")]:
        monkeypatch.delenv(name)  # the run's own (a test's data folder, say) are not this test's
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("PROJECTOR_LOG_LEVLE=debug\nPROJECTOR_POOL_SIZE=5\n")
    assert unknown_variables(settings_environment()) == ["PROJECTOR_LOG_LEVLE (did you mean PROJECTOR_LOG_LEVEL?)"]
