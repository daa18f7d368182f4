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
