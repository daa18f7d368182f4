"""The one settings class. Every field is read from the environment with the ``PROJECTOR_`` prefix
(``DATABASE_URL`` is also read bare, as deployments expect) and documented in the README."""

from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PROJECTOR_", env_file=".env", extra="ignore")

    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("PROJECTOR_DATABASE_URL", "DATABASE_URL"),
        description="postgresql+asyncpg://user:pass@host/db; unset starts an embedded PostgreSQL.",
    )
    data_dir: Path = Field(default=Path(".projector"), description="Where the embedded PostgreSQL keeps its data.")
    pool_size: int = Field(default=10, ge=1, description="Connections kept open per process.")
    pool_max_overflow: int = Field(default=10, ge=0, description="Extra connections allowed under load.")
    pool_timeout_seconds: float = Field(default=5.0, gt=0, description="Wait for a free connection before 503.")
    connect_timeout_seconds: float = Field(default=5.0, gt=0, description="Give up connecting to PostgreSQL.")
    statement_timeout_ms: int = Field(default=15_000, ge=0, description="Per-statement limit; 0 disables it.")
    lock_timeout_ms: int = Field(default=5_000, ge=0, description="Wait for a session's append lock.")

    migrate_on_start: bool = Field(default=True, description="Apply migrations before serving.")
    host: str = Field(default="127.0.0.1", description="Address `projector serve` binds.")
    port: int = Field(default=8000, description="Port `projector serve` binds.")
    log_level: str = Field(default="info", description="debug, info, warning or error.")

    max_body_bytes: int = Field(default=64 * MIB, ge=1, description="Largest request body (413 beyond).")
    max_message_bytes: int = Field(default=16 * MIB, ge=1, description="Largest single message (content+metadata).")
    max_parts_per_message: int = Field(default=2_000, ge=1, description="Most content parts in one message.")
    max_batch_messages: int = Field(default=1_000, ge=1, description="Most messages in one append.")
    max_metadata_bytes: int = Field(default=256 * 1024, ge=1, description="Largest metadata object.")
    default_page_size: int = Field(default=50, ge=1, description="Page size when `limit` is not given.")
    max_page_size: int = Field(default=500, ge=1, description="Largest `limit` accepted.")


@lru_cache
def get_settings() -> Settings:
    return Settings()
