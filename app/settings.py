"""The one settings class. Every field is read from the environment with the ``PROJECTOR_`` prefix
(``DATABASE_URL`` is also read bare, as deployments expect) and documented in the README."""

import difflib
import json
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from dotenv import dotenv_values
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

MIB = 1024 * 1024


class ModelServerSetting(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    base_url: str
    api_key: SecretStr | None = None


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

    # --- Scale-out: a transaction pooler in front, read replicas beside ---
    transaction_pooling: bool = Field(
        default=False,
        description="The database URLs lead to a transaction-pooling PgBouncer: no prepared statement outlives "
        "its transaction, and the timeouts ride on each BEGIN instead of the connection's start-up parameters.",
    )
    database_read_url: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        validation_alias=AliasChoices("PROJECTOR_DATABASE_READ_URL", "DATABASE_READ_URL"),
        description="Streaming replicas for reads, comma-separated; empty reads from the primary.",
    )
    replica_wait_ms: int = Field(
        default=500,
        ge=0,
        description="How long a read carrying a consistency token waits for a replica to replay past it "
        "before the primary serves it.",
    )

    migrate_on_start: bool = Field(default=True, description="Apply migrations before serving.")
    host: str = Field(default="127.0.0.1", description="Address `projector serve` binds.")
    port: int = Field(default=8000, ge=1, le=65535, description="Port `projector serve` binds.")
    log_level: Literal["debug", "info", "warning", "error", "critical"] = Field(
        default="info", description="debug, info, warning, error or critical."
    )

    max_body_bytes: int = Field(default=64 * MIB, ge=1, description="Largest request body (413 beyond).")
    client_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        description="Longest wait for a client: for a request's head (request line and headers) to arrive whole, "
        "for each next part of its body (408), and to take each next 256 KB of a streamed answer; past it the "
        "connection is closed (reset, for an answer), so a client that stalls does not hold it, or the page it was "
        "being sent, for good.",
    )
    max_message_bytes: int = Field(default=16 * MIB, ge=1, description="Largest single message (content+metadata).")
    max_parts_per_message: int = Field(default=2_000, ge=1, description="Most content parts in one message.")
    max_batch_messages: int = Field(default=1_000, ge=1, description="Most messages in one append.")
    max_request_parts: int = Field(
        default=100_000,
        ge=1,
        description="Most content parts in one request, all its messages together (413 beyond): checked before "
        "the parts are validated, which is what makes a body's memory grow.",
    )
    max_metadata_bytes: int = Field(default=256 * 1024, ge=1, description="Largest metadata object.")
    max_json_depth: int = Field(
        default=64,
        ge=1,
        le=128,
        description="Deepest nesting of a stored JSON value (content, metadata, a run's fields); at most 128, so "
        "every response that wraps one stays within what the encoder can write.",
    )
    max_header_bytes: int = Field(default=64 * 1024, ge=1024, description="Largest total of request headers (431).")
    max_header_count: int = Field(default=100, ge=8, description="Most request headers (431).")
    default_page_size: int = Field(default=50, ge=1, description="Page size when `limit` is not given.")
    max_page_size: int = Field(default=500, ge=1, description="Largest `limit` accepted.")
    max_response_bytes: int = Field(
        default=32 * MIB,
        ge=1,
        description="Stored bytes one page of messages or of a paged view may hold; a page past it holds fewer "
        "messages than `limit` (hasMore and nextCursor lead on), and a single larger message comes alone.",
    )
    max_response_parts: int = Field(
        default=100_000, ge=1, description="Content parts one page may hold, cut like max_response_bytes."
    )
    streams_per_caller: int = Field(
        default=256,
        ge=1,
        description="Streamed answers (event streams, and pages, views and exports large enough to be streamed) "
        "one caller may hold open at once in each process, 429 beyond: each may hold a page until its client "
        "takes it (the client timeout). A caller is the tenant of its API key, or with auth off the client's "
        "address; every live viewer of a frontend that connects with one key counts.",
    )
    view_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        description="Longest a view (building, redacting, encoding) may work in its worker thread; then 503.",
    )
    trim_memory_after_seconds: float = Field(
        default=1.0,
        ge=0,
        description="Once no request of a megabyte or more (body or answer) has ended for this long, freed memory "
        "is given back to the system (glibc's malloc_trim, in a worker thread); 0 never does. glibc only.",
    )
    chat_reuse_bytes: int = Field(
        default=256 * MIB,
        ge=0,
        description="Memory (estimated) for the windows /chat and the context report keep between turns, so the "
        "next turn reads only the messages appended since; least recently used go first. 0 keeps none.",
    )

    # --- Context windows, compaction and pruning ---
    model_servers_by_provider: Annotated[dict[str, ModelServerSetting], NoDecode] = Field(
        default_factory=dict,
        description='OpenAI-compatible servers asked for max_model_len, per provider: {"vllm": {"baseUrl": ...}}.',
    )
    model_servers_by_model: Annotated[dict[str, ModelServerSetting], NoDecode] = Field(
        default_factory=dict, description="The same per model (provider/modelId or modelId); beats the provider's."
    )
    context_windows: Annotated[dict[str, int], NoDecode] = Field(
        default_factory=dict, description='Configured windows: {"anthropic/claude-sonnet-4-5": 200000}.'
    )
    window_cache_seconds: float = Field(default=300.0, gt=0, description="How long a server's window is trusted.")
    model_server_timeout_seconds: float = Field(
        default=3.0, gt=0, description="Longest wait for a model server's window; then the next source is used."
    )
    compaction_threshold_ratio: float = Field(
        default=0.8, gt=0, le=1, description="Compaction is due at this share of the window."
    )
    compaction_reserved_output_tokens: int | None = Field(
        default=None,
        ge=0,
        description="Room kept for the answer when a request names no maxOutputTokens and the catalog no limit.",
    )
    compaction_tail_tokens: int = Field(default=20_000, ge=0, description="Recent history kept verbatim.")
    summarizer_base_url: str | None = Field(
        default=None, description="OpenAI-compatible server that writes compaction summaries; unset: caller gives it."
    )
    summarizer_model: str | None = Field(default=None, description="The summarizer's model id.")
    summarizer_api_key: SecretStr | None = Field(default=None, description="Bearer key for the summarizer.")
    summarizer_context_window_tokens: int | None = Field(
        default=None,
        gt=0,
        description="The summarizer's window when its server does not list it; a longer history is summarized "
        "in parts.",
    )
    cache_key_secret: SecretStr | None = Field(
        default=None,
        description="Keys OpenAI's prompt_cache_key (an HMAC of tenant and session); unset: no key is sent.",
    )
    cache_min_tokens: int | None = Field(
        default=None, ge=0, description="Overrides each Claude model's minimum cacheable prompt length."
    )
    prune_protect_user_turns: int = Field(default=2, ge=0, description="Recent user turns pruning never touches.")
    prune_protect_tool_tokens: int = Field(default=40_000, ge=0, description="Recent tool output kept unpruned.")
    prune_minimum_savings_tokens: int = Field(default=20_000, ge=0, description="Prune only when it saves this.")
    prune_protected_tools: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["skill"], description="Never pruned."
    )

    # --- Trust: API keys, idempotency and CORS ---
    # The keys are secrets: SecretStr keeps them out of reprs and logs. Either setting enables auth.
    api_keys: SecretStr | None = Field(
        default=None,
        description='JSON list of {"key" or "sha256", "tenant", "role"}; unset (and no file) turns auth off.',
    )
    api_keys_file: Path | None = Field(default=None, description="A file holding the same JSON list as api_keys.")
    idempotency_ttl_seconds: int = Field(
        default=86_400, ge=1, description="How long a kept Idempotency-Key response is replayed."
    )
    idempotency_lease_seconds: int = Field(
        default=30, ge=1, description="An in-flight key not renewed for this long (its process died) is free again."
    )
    idempotency_max_response_bytes: int = Field(
        default=1 * MIB, ge=1, description="Largest response kept whole for replay; past it a retry gets 409."
    )
    idempotency_max_keys_per_tenant: int = Field(
        default=10_000, ge=1, description="Most live Idempotency-Keys per tenant; a new key past it is 429."
    )
    redact_reader_exports: bool = Field(
        default=True, description="Reader keys get exports redacted whatever they ask; false lets them choose."
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Origins allowed by CORS (comma-separated or JSON list); empty is off."
    )

    # --- Live events, search ---
    listen_database_url: str | None = Field(
        default=None,
        description="Where each process keeps its one LISTEN connection; unset: the database URL. Behind "
        "PgBouncer in transaction mode LISTEN needs a direct connection to PostgreSQL.",
    )
    events_heartbeat_seconds: float = Field(
        default=15.0, gt=0, description="An idle event stream sends a comment this often, so proxies keep it open."
    )
    events_max_streams: int = Field(default=1_000, ge=1, description="Open event streams per process (503 beyond).")
    events_queue_size: int = Field(
        default=256, ge=1, description="Notices a stream may fall behind by before it resyncs from the database."
    )
    search_config: str = Field(
        default="simple",
        pattern=r"^[a-z_][a-z0-9_]*$",
        description="PostgreSQL text search configuration for new messages and for queries ('simple', 'english'...).",
    )

    @field_validator("database_url", "listen_database_url")
    @classmethod
    def _asyncpg_driver(cls, value: str | None) -> str | None:
        return None if value is None else postgresql_url(value)

    @field_validator("database_read_url", mode="before")
    @classmethod
    def _split_read_urls(cls, value: object) -> object:
        if isinstance(value, str):
            value = [url.strip() for url in value.split(",") if url.strip()]
        if isinstance(value, list):
            return [postgresql_url(url) if isinstance(url, str) else url for url in value]
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_case(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator(
        "model_servers_by_provider", "model_servers_by_model", "context_windows", "prune_protected_tools", mode="before"
    )
    @classmethod
    def _json(cls, value: object) -> object:
        """Decoded here rather than by the settings source, whose error names neither the variable nor what is
        wrong with its JSON."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as error:
                raise ValueError(f"not JSON: {error}") from None
        return value

    @model_validator(mode="after")
    def _default_page_within_maximum(self) -> "Settings":
        if self.default_page_size > self.max_page_size:
            raise ValueError(
                f"PROJECTOR_DEFAULT_PAGE_SIZE ({self.default_page_size}) is above PROJECTOR_MAX_PAGE_SIZE"
                f" ({self.max_page_size})"
            )
        return self

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [origin.strip() for origin in text.split(",") if origin.strip()]
        return value


def asyncpg_url(url: str) -> str:
    """Deployments hand out plain ``postgres://`` / ``postgresql://`` URLs; the service speaks asyncpg."""
    scheme, separator, rest = url.partition("://")
    if separator and scheme in ("postgres", "postgresql"):
        return f"postgresql+asyncpg://{rest}"
    return url


def postgresql_url(url: str) -> str:
    """``url`` for asyncpg, refused at start when it is no PostgreSQL URL, instead of failing when the first
    connection is made."""
    converted = asyncpg_url(url.strip())
    try:
        driver = make_url(converted).drivername
    except ArgumentError:
        raise ValueError("not a URL; expected postgresql://user:pass@host:5432/db") from None
    except (ValueError, TypeError):
        # The parser's own words quote the part it could not read, which may be the password (a URL without
        # a host reads the password as the port).
        raise ValueError("not a URL the driver can read; expected postgresql://user:pass@host:5432/db") from None
    if driver != "postgresql+asyncpg":
        raise ValueError(f"{driver}:// is not PostgreSQL; expected postgresql://user:pass@host:5432/db")
    return converted


class InvalidSettings(ValueError):
    """The environment holds a setting the service cannot use. The message names each variable as it is set
    and never repeats a value, since a value may be a secret."""


def environment_names() -> dict[str, str]:
    """The variable each field is read from (``A or B`` for a field read under two names), keyed by every name
    a validation error may give the field: its own, or its first alias."""
    names = {}
    for field, info in Settings.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names[field] = names[str(alias.choices[0])] = " or ".join(str(choice) for choice in alias.choices)
        else:
            names[field] = f"PROJECTOR_{field.upper()}"
    return names


COMMAND_LINE_VARIABLES = frozenset({"PROJECTOR_URL", "PROJECTOR_API_KEY"})
"""Read by ``projector import`` and ``projector archive`` (the service they talk to), not by the service."""


def settings_environment() -> dict[str, str]:
    """Where the settings are read from: the ``.env`` file, then the environment, which wins."""
    env_file = Settings.model_config.get("env_file")
    from_file = dotenv_values(env_file) if isinstance(env_file, str) else {}
    return {**{name: value or "" for name, value in from_file.items()}, **os.environ}


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """``PROJECTOR_`` variables that no setting reads, each with the known name it most resembles: a misspelt
    setting is otherwise ignored without a word, and its default silently used."""
    known = {name for names in environment_names().values() for name in names.split(" or ")}
    known |= COMMAND_LINE_VARIABLES
    found = []
    for name in sorted(environ):
        if name.startswith("PROJECTOR_") and name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            found.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return found


def describe_invalid(error: ValidationError) -> str:
    lines = []
    names = environment_names()
    for problem in error.errors(include_url=False, include_input=False):
        location = [str(part) for part in problem["loc"]]
        if location:
            location[0] = names.get(location[0], location[0])
        message = problem["msg"].removeprefix("Value error, ")
        lines.append(f"{'.'.join(location)}: {message}" if location else message)
    return "\n".join(lines)


@lru_cache
def get_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as error:
        raise InvalidSettings(describe_invalid(error)) from None
    except SettingsError as error:
        raise InvalidSettings(str(error)) from None
