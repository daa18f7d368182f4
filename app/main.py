"""Builds the ASGI app (``app.main:app``): routes, error rendering, middleware and the database lifecycle.

With no ``DATABASE_URL`` the lifespan starts an embedded PostgreSQL in the data folder and stops it on exit;
with ``migrate_on_start`` (the default) it applies the migrations before serving.
"""

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from starlette.middleware.cors import CORSMiddleware

from app.api.auth import OPEN_PATHS, Authentication, Authenticator, declare_bearer_auth, load_api_keys
from app.api.callers import caller_by_address, caller_by_tenant
from app.api.consistency import Consistency
from app.api.idempotency import Idempotency, declare_idempotency_key
from app.api.memory_return import ReturnFreedMemory, glibc_malloc_trim
from app.api.middleware import BodyLimit, HeadAsGet, HeaderLimit, RequestLogging
from app.api.problems import install_problem_handlers, problem_responses
from app.api.responses import OrjsonResponse
from app.api.routes import (
    analytics,
    chat,
    context,
    events,
    health,
    imports,
    messages,
    projection,
    runs,
    search,
    sessions,
    ui,
)
from app.api.streaming import StreamLimits
from app.context.model_server import ModelServerWindows
from app.context.summarizer import Summarizer
from app.observability import configure_logging
from app.services.context_config import summarizer_config, window_config
from app.services.events import EventHub
from app.services.window_reuse import WindowReuse
from app.settings import Settings, get_settings, settings_environment, unknown_variables
from app.signals import on_exit_signal
from app.store import migrations
from app.store.database import Database, quiet_lost_cancel_requests
from app.store.embedded import EmbeddedPostgres
from app.store.events import NoticeListener, listen_dsn

log = logging.getLogger("projector")

GC_THRESHOLDS = (200_000, 10, 10)
"""The cycle collector's thresholds (CPython's are 700, 10, 10); see ``tune_garbage_collection``."""


def tune_garbage_collection() -> None:
    """Makes the cycle collector run rarely, for the process's life.

    A model view or a ``/chat`` payload of a long session builds hundreds of thousands of short-lived
    containers that hold no cycles: reference counting frees them, yet at CPython's thresholds every few
    hundred allocations wake the collector, which walks the young objects and finds nothing. The young
    generation counts allocations less deallocations, so a young collection runs only once that many
    containers are alive since the last one: a cold ``/chat`` of 10,000 messages adds about 110,000 (most of
    them the window and turn it keeps for the next turn), so at 200,000 its temporaries are freed before any
    collection sees them, and the kept windows, which evict each other, rarely add up to a collection at all
    (at 10,000, a process serving many long sessions spent about a fifth of each cold ``/chat`` walking them
    in its older generations). A collection that does run walks more at once: one longer pause instead of
    many short ones. What exists at start-up (modules, routes, settings) lives as long as the process, so it
    is frozen out of every collection. `docs/performance.md` has the figures and `python -m bench.gc_tuning`."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


PROBLEM_STATUSES = {
    400: "Bad request: a malformed cursor, header or Idempotency-Key",
    401: "Missing or invalid API key",
    403: "The key's role does not allow this",
    404: "Not found (another tenant's resources are not found either)",
    408: "The request body stopped arriving (PROJECTOR_CLIENT_TIMEOUT_SECONDS); send it again",
    409: "Conflict, or a request with this Idempotency-Key still running",
    413: "Content too large",
    415: "A body sent as anything but application/json, or compressed (Content-Encoding)",
    422: "Invalid input, or an Idempotency-Key reused for another request",
    429: "Too many live Idempotency-Keys for the tenant, or too many streamed answers open for this caller",
    431: "Request headers past PROJECTOR_MAX_HEADER_BYTES or PROJECTOR_MAX_HEADER_COUNT",
    503: "The database is unavailable or busy; retry",
}
PROBLEM_RESPONSES = problem_responses(PROBLEM_STATUSES)
"""Declared on every operation, so clients and schema-driven fuzzers know the problem+json answers."""


PROJECTION_PATH = "/sessions/{session_id}/projection"
DOCS_URL = "/docs"
DOCS_ASSETS_URL = "/static-offline-docs"
"""Where Swagger UI's scripts and styles are served from (fastapi-offline's default, named to be opened)."""


def declare_enforced_limits(openapi: dict[str, Any], settings: Settings) -> None:
    """What the settings enforce, said in the document: ``limit``'s maximum is the configured page size, and
    the export view answers ``text/markdown`` when asked for ``format=markdown``."""
    for operations in openapi.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("name") == "limit" and parameter.get("in") == "query":
                    schema = parameter["schema"]
                    for branch in schema.get("anyOf", [schema]):
                        if branch.get("type") == "integer":
                            branch["maximum"] = settings.max_page_size
    projection = openapi.get("paths", {}).get(PROJECTION_PATH, {}).get("get")
    if projection is not None:
        content = projection["responses"]["200"].setdefault("content", {})
        content["text/markdown"] = {"schema": {"type": "string", "description": "view=export&format=markdown"}}


def create_app(settings: Settings | None = None, *, database_url: str | None = None) -> FastAPI:
    """``database_url`` overrides the settings (tests pass a prepared database and skip migrations)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging(settings.log_level)
        restore_loop_handler = quiet_lost_cancel_requests(asyncio.get_running_loop())
        embedded: EmbeddedPostgres | None = None
        url = database_url or settings.database_url
        if url is None:
            embedded = await asyncio.to_thread(EmbeddedPostgres, settings.data_dir)
            url = await asyncio.to_thread(embedded.ensure_database)
            log.info("started an embedded PostgreSQL", extra={"dataDir": str(settings.data_dir)})
        if settings.migrate_on_start and database_url is None:
            await asyncio.to_thread(migrations.upgrade, url)
        app.state.database = Database.open(url, settings)
        hub = app.state.events = EventHub(
            max_streams=settings.events_max_streams,
            queue_size=settings.events_queue_size,
            on_deleted=app.state.window_reuse.forget_session,
        )
        if settings.transaction_pooling and not settings.listen_database_url:
            log.warning(
                "transaction pooling is on but PROJECTOR_LISTEN_DATABASE_URL is unset: the event stream's LISTEN"
                " goes through the pooler, where notices reach whichever client holds the server connection"
            )
        listener = app.state.event_listener = NoticeListener(
            listen_dsn(settings.listen_database_url or url),
            hub.deliver,
            hub.resync_all,
            connect_timeout=settings.connect_timeout_seconds,
        )
        listener.start()
        restore_signals = on_exit_signal(hub.close_soon)
        app.state.model_windows = ModelServerWindows(window_config(settings))
        summarizer = summarizer_config(settings)
        app.state.summarizer = Summarizer(summarizer) if summarizer else None
        tune_garbage_collection()
        if not app.state.authenticator.enabled:
            log.warning("authentication is off: no API keys are configured, every caller has full access")
        if unknown := unknown_variables(settings_environment()):
            log.warning("no setting reads these variables, which are ignored: %s", ", ".join(unknown))
        try:
            yield
        finally:
            restore_signals()
            hub.close()
            await listener.stop()
            await app.state.model_windows.aclose()
            if app.state.summarizer is not None:
                await app.state.summarizer.aclose()
            await app.state.database.dispose()
            if embedded is not None:
                await asyncio.to_thread(embedded.stop)
            restore_loop_handler()

    # Swagger UI from a package's own files, not a CDN, so the docs work offline. No ReDoc: its bundle
    # still fetches a logo from its maker's CDN.
    app = FastAPIOffline(
        docs_url=DOCS_URL,
        static_url=DOCS_ASSETS_URL,
        redoc_url=None,
        title="Projector",
        version="0.1.0",
        summary="Message history for AI agents, served as transcripts, model context and provider payloads.",
        lifespan=lifespan,
        default_response_class=OrjsonResponse,
        responses=PROBLEM_RESPONSES,
    )
    app.state.settings = settings
    app.state.window_reuse = WindowReuse(settings.chat_reuse_bytes)
    authenticator = Authenticator(load_api_keys(settings), redact_reader_exports=settings.redact_reader_exports)
    app.state.authenticator = authenticator
    caller_of = caller_by_tenant if authenticator.enabled else caller_by_address
    app.state.stream_limits = StreamLimits(settings.streams_per_caller, caller_of)
    generate_openapi = app.openapi

    def openapi_with_trust() -> dict[str, Any]:
        fresh = app.openapi_schema is None
        document = generate_openapi()
        if fresh:
            declare_enforced_limits(document, settings)
            declare_idempotency_key(document)
            if authenticator.enabled:
                declare_bearer_auth(document)
        return document

    app.openapi = openapi_with_trust  # type: ignore[method-assign]
    install_problem_handlers(app)
    for router in (
        imports.router,
        sessions.router,
        messages.router,
        runs.router,
        projection.router,
        chat.router,
        context.router,
        events.router,
        search.router,
        analytics.router,
        health.router,
        ui.router,
    ):
        app.include_router(router)
    # Added innermost first. From the outside: CORS (when on) answers preflights and RequestLogging sees every
    # answer; ReturnFreedMemory notes each large request once everything under it let go of it; HeaderLimit
    # bounds what the others read; Authentication answers 401 before any body is read; BodyLimit counts the
    # bytes Idempotency reads; HeadAsGet runs a HEAD as the GET route it asks about.
    app.add_middleware(HeadAsGet)
    app.add_middleware(
        Idempotency,
        ttl_seconds=settings.idempotency_ttl_seconds,
        lease_seconds=settings.idempotency_lease_seconds,
        max_response_bytes=settings.idempotency_max_response_bytes,
        max_keys_per_tenant=settings.idempotency_max_keys_per_tenant,
    )
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, idle_seconds=settings.client_timeout_seconds)
    app.add_middleware(Consistency)
    # The API document, the docs page with its assets, and the viewer's pages and assets hold no data.
    open_paths = OPEN_PATHS | ui.OPEN_PATHS | {DOCS_URL, app.openapi_url, app.swagger_ui_oauth2_redirect_url}
    app.add_middleware(
        Authentication,
        authenticator=authenticator,
        open_paths=frozenset(path for path in open_paths if path is not None),
        open_prefixes=(f"{DOCS_ASSETS_URL}/", ui.OPEN_PREFIX),
    )
    app.add_middleware(HeaderLimit, max_bytes=settings.max_header_bytes, max_count=settings.max_header_count)
    trim = glibc_malloc_trim()
    if settings.trim_memory_after_seconds > 0 and trim is not None:
        app.add_middleware(ReturnFreedMemory, quiet_seconds=settings.trim_memory_after_seconds, trim=trim)
    app.add_middleware(RequestLogging)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "HEAD", "POST", "PATCH", "DELETE"],
            allow_headers=[
                "authorization",
                "content-type",
                "idempotency-key",
                "if-none-match",
                "last-event-id",
                "x-request-id",
                "projector-consistency",
            ],
            expose_headers=[
                "etag",
                "link",
                "location",
                "retry-after",
                "x-request-id",
                "idempotent-replayed",
                "projector-consistency",
            ],
            # Bearer keys, not cookies: browsers need no credentials mode.
            allow_credentials=False,
        )
    return app


app = create_app()
