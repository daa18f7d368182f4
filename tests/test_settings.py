"""Settings read from the environment."""

import pytest

from app.settings import Settings


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
