"""Table definitions: the schema the migrations build, kept here so queries and migrations agree.

``session_id`` is part of every key (and ``tenant_id`` leads them), so the schema can be distributed by
session without change.
"""

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    Column,
    Computed,
    DateTime,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSON, JSONB, REGCONFIG, TSVECTOR

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
    }
)

sessions = Table(
    "sessions",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("id", String(128), nullable=False),
    Column("title", Text),
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    # A model reference as written: a "provider/modelId" string or opencode's {providerID, modelID, variant?}.
    Column("model", JSONB(none_as_null=True)),
    Column("context_window_tokens", Integer),
    Column("last_seq", BigInteger, nullable=False, server_default=text("0")),
    # Counts every change to the session's messages (appends and amendments), so a projection ETag
    # changes when a pruned tool result changes the model view without a new seq.
    Column("revision", BigInteger, nullable=False, server_default=text("0")),
    # Where the model view starts, kept here so it reads this row and one seq range, never a search whose
    # cost depends on statistics or a plan: the newest complete compaction's boundary and summary seqs and
    # the first seq of its live history (the kept tail's start, else the boundary). All NULL when the
    # session has no complete compaction. Written under the append lock (``app.store.live_start``).
    Column("compaction_boundary_seq", BigInteger),
    Column("compaction_summary_seq", BigInteger),
    Column("live_history_start_seq", BigInteger),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("tenant_id", "id"),
    Index("ix_sessions_tenant_id_created_at_id", "tenant_id", "created_at", "id"),
)

runs = Table(
    "runs",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("session_id", String(128), nullable=False),
    Column("id", String(128), nullable=False),
    Column("agent", Text),
    Column("model", JSONB(none_as_null=True)),
    Column("system", Text),
    Column("tools", JSONB),
    Column("variant", Text),
    Column("format", JSONB),
    Column("usage", JSONB),
    Column("result", JSONB),
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    # The run's stored size, every field together, so a page of runs is cut by bytes without reading them.
    Column(
        "stored_bytes",
        Integer,
        Computed(
            "coalesce(octet_length(agent), 0) + coalesce(octet_length((model)::text), 0)"
            " + coalesce(octet_length(system), 0) + coalesce(octet_length((tools)::text), 0)"
            " + coalesce(octet_length(variant), 0) + coalesce(octet_length((format)::text), 0)"
            " + coalesce(octet_length((usage)::text), 0) + coalesce(octet_length((result)::text), 0)"
            " + octet_length((metadata)::text)",
            persisted=True,
        ),
    ),
    PrimaryKeyConstraint("tenant_id", "session_id", "id"),
    ForeignKeyConstraint(["tenant_id", "session_id"], ["sessions.tenant_id", "sessions.id"], ondelete="CASCADE"),
    Index("ix_runs_tenant_id_session_id_created_at_id", "tenant_id", "session_id", "created_at", "id"),
)

messages = Table(
    "messages",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("session_id", String(128), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("id", String(128), nullable=False),
    Column("run_id", String(128)),
    Column("role", Text, nullable=False),
    Column("kind", Text, nullable=False),
    # ``json`` keeps the text as written, so a NUL or an unpaired surrogate (as its ``\\u`` escape) is kept
    # exactly; ``jsonb`` refuses both. Nothing queries inside content, and ``json`` reads back about twice
    # as fast (no conversion from the binary form on every read).
    Column("content", JSON, nullable=False),
    # Metadata stays ``jsonb`` (merged and queried in SQL); the rare string it cannot hold is escaped.
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("token_estimate", Integer, nullable=False, server_default=text("0")),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    # Set at write time when content or metadata holds a NUL or an unpaired surrogate (or an escaped
    # string): only such messages take the slow paths on read and on the way to a provider.
    Column("unusual_text", Boolean, nullable=False, server_default=text("false")),
    # What search and analytics read, worked out from the parts at write time (app.engine.search_text), so
    # no query parses the content. The vector is built with the configuration named on the row, which is
    # the one the service was set to when the message was written.
    Column("search_config", REGCONFIG, nullable=False, server_default=text("'simple'::regconfig")),
    Column("search_text", Text, nullable=False, server_default=text("''")),
    Column("search_vector", TSVECTOR, Computed("to_tsvector(search_config, search_text)", persisted=True)),
    Column("tool_calls", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("tool_results", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("tool_errors", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    # Each message's stored size, so pages are cut by bytes and parts without reading content.
    Column("content_bytes", Integer, Computed("octet_length((content)::text)", persisted=True)),
    Column(
        "content_parts",
        Integer,
        Computed(
            "CASE WHEN (json_typeof(content) = 'array'::text) THEN json_array_length(content) ELSE 1 END",
            persisted=True,
        ),
    ),
    Column("metadata_bytes", Integer, Computed("octet_length((metadata)::text)", persisted=True)),
    # The session revision of the last change that rewrote this message's view (an amendment, a prune's
    # mark, a run it named created late); null for a message never rewritten, so appends index nothing.
    # A window kept from an earlier revision re-reads just these (app.services.window_reuse).
    Column("amended_revision", BigInteger),
    PrimaryKeyConstraint("tenant_id", "session_id", "seq"),
    UniqueConstraint("tenant_id", "session_id", "id"),
    ForeignKeyConstraint(["tenant_id", "session_id"], ["sessions.tenant_id", "sessions.id"], ondelete="CASCADE"),
    Index("ix_messages_tenant_id_session_id_kind_seq", "tenant_id", "session_id", "kind", "seq"),
    # Whether a message names a run, asked when the run is created (a run named before it existed changes
    # the session's views); only messages that name one are indexed.
    Index(
        "ix_messages_tenant_id_session_id_run_id",
        "tenant_id",
        "session_id",
        "run_id",
        postgresql_where=text("run_id IS NOT NULL"),
    ),
    Index(
        "ix_messages_tenant_id_session_id_amended_revision",
        "tenant_id",
        "session_id",
        "amended_revision",
        postgresql_where=text("amended_revision IS NOT NULL"),
    ),
    Index("ix_messages_search_vector", "search_vector", postgresql_using="gin"),
)

compaction_leases = Table(
    "compaction_leases",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("session_id", String(128), nullable=False),
    # Which compaction holds the session, so a late finisher whose lease ran out cannot end a newer one.
    Column("holder", String(32), nullable=False),
    # Past this the lease counts as absent: a crashed compaction frees its session by itself.
    Column("expires_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("tenant_id", "session_id"),
    ForeignKeyConstraint(["tenant_id", "session_id"], ["sessions.tenant_id", "sessions.id"], ondelete="CASCADE"),
)

prompt_prefixes = Table(
    "prompt_prefixes",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("session_id", String(128), nullable=False),
    # sha256 of the request parameters the payload was built with: one row per way a session is asked for.
    Column("params_hash", String(64), nullable=False),
    Column("units", Integer, nullable=False),
    Column("digest", String(64), nullable=False),
    Column("length", BigInteger, nullable=False),
    Column("total_length", BigInteger, nullable=False),
    # How far past the prefix the request wrote the provider's cache (its end), when it did.
    Column("written_units", Integer),
    Column("written_digest", String(64)),
    Column("written_length", BigInteger),
    # What the history was when the payload was built, to name what broke a prefix.
    Column("revision", BigInteger, nullable=False),
    Column("boundary_id", String(128)),
    Column("pruned", Integer, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("tenant_id", "session_id", "params_hash"),
    ForeignKeyConstraint(["tenant_id", "session_id"], ["sessions.tenant_id", "sessions.id"], ondelete="CASCADE"),
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("tenant_id", Text, nullable=False),
    Column("key", String(255), nullable=False),
    # SHA-256 (hex) of method, path and body: the same key with another request is refused, not replayed.
    Column("fingerprint", String(64), nullable=False),
    # Which attempt holds the key, so a late finisher whose lease ran out cannot overwrite a newer claim.
    Column("claim", String(32), nullable=False),
    # The role of the key that claimed it: a replay to a lesser role is refused (NULL: kept before roles were).
    Column("role", Text),
    # NULL while the first request is in flight; then its status, headers and exact body bytes.
    Column("status_code", Integer),
    Column("response_headers", JSONB),
    Column("response_body", LargeBinary),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    # In flight: the lease end; done: when the kept response stops being replayed.
    Column("expires_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("tenant_id", "key"),
    Index("ix_idempotency_keys_expires_at", "expires_at"),
)
