"""Asks an OpenAI-compatible model server how long a context its model accepts.

``GET {base}/v1/models`` lists the served models; vLLM (and SGLang) put ``max_model_len`` on each entry.
One of the two modules in this package that do I/O. It must never fail a request: every failure (refused,
timeout, an error status, a body that is not JSON, a model or field that is missing) becomes "no answer"
with a note saying why, and the resolver falls through to the configured window, the session's and the
model catalog's. Answers, failures included, are cached per server, so a dead server costs one short
timeout per ``failure_ttl_seconds``, not one per request.
"""

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from app.context.catalog import ModelCatalog, bundled_catalog
from app.context.config import ModelServer, SummarizerConfig, Timeouts, WindowConfig
from app.context.window import ContextWindow, model_keys, resolve_window

Clock = Callable[[], float]

WINDOW_FIELDS: tuple[str, ...] = ("max_model_len", "context_length", "max_context_length", "context_window")
"""Where servers put the window on a model entry, in the order trusted: vLLM and SGLang use
``max_model_len``; OpenRouter-style gateways ``context_length``; LM Studio ``max_context_length``."""


@dataclass(frozen=True, slots=True)
class ServerAnswer:
    """What a server said about one model: its window, or why there is none."""

    tokens: int | None
    url: str | None
    problem: str | None = None

    @property
    def notes(self) -> tuple[str, ...]:
        return (self.problem,) if self.problem else ()


@dataclass(frozen=True, slots=True)
class _Listing:
    """One fetch of a server's model list: window per model id, or the reason the fetch failed."""

    fetched_at: float
    windows: Mapping[str, int | None]
    problem: str | None


_USERINFO = re.compile(r"(?<=//)[^/?#@\s]*@")


def shown(text: str) -> str:
    """``text`` (a server's URL, or a note naming one) without the ``user:password@`` a configured URL may
    carry: notes and errors reach any caller, and the credentials are the operator's."""
    return _USERINFO.sub("", text)


def models_url(base_url: str) -> str:
    return _endpoint(base_url, "models")


def chat_completions_url(base_url: str) -> str:
    return _endpoint(base_url, "chat/completions")


def _endpoint(base_url: str, path: str) -> str:
    base = base_url.rstrip("/")
    if base.endswith("/v1"):
        return f"{base}/{path}"
    return f"{base}/v1/{path}"


def http_timeout(timeouts: Timeouts) -> httpx.Timeout:
    return httpx.Timeout(
        connect=timeouts.connect_seconds,
        read=timeouts.read_seconds,
        write=timeouts.read_seconds,
        pool=timeouts.connect_seconds,
    )


def windows_from_listing(body: Any) -> dict[str, int | None]:
    """Window per model id from a ``/v1/models`` body; tolerant of shapes other than OpenAI's ``data``."""
    entries: Any = body.get("data", body.get("models")) if isinstance(body, dict) else body
    if not isinstance(entries, list):
        raise ValueError("the body has no list of models")
    windows: dict[str, int | None] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        window = _window_of(entry)
        # vLLM serves a model under its id and may name its weights in ``root``; OAH also matches ``name``.
        for key in ("id", "name", "root"):
            name = entry.get(key)
            if isinstance(name, str) and name and (windows.get(name) is None):
                windows[name] = window
    return windows


def _window_of(entry: Mapping[str, Any]) -> int | None:
    for key in WINDOW_FIELDS:
        value = entry.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and value > 0:
            return value
        if isinstance(value, float) and value.is_integer() and value > 0:
            return int(value)
        if isinstance(value, str) and value.isascii() and value.isdigit() and int(value) > 0:
            return int(value)
    return None


class ModelServerWindows:
    """Looks up and caches model windows from the configured servers.

    Share one instance per process (the cache is its point). Give it the service's ``httpx.AsyncClient``
    to reuse connections, or let it own one and call ``aclose``. ``clock`` is injectable so tests can step
    time instead of sleeping; ``catalog`` (the installed packages' by default) so they can use a small one.
    """

    def __init__(
        self,
        config: WindowConfig,
        *,
        client: httpx.AsyncClient | None = None,
        clock: Clock = time.monotonic,
        catalog: ModelCatalog | None = None,
    ) -> None:
        self._config = config
        self._catalog = catalog or bundled_catalog()
        self._client = client or httpx.AsyncClient()
        self._owns_client = client is None
        self._clock = clock
        self._listings: dict[str, _Listing] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    def server_for(self, provider: str | None, model: str | None) -> ModelServer | None:
        for key in model_keys(provider, model):
            server = self._config.servers_by_model.get(key)
            if server is not None:
                return server
        if provider:
            return self._config.servers_by_provider.get(provider)
        return None

    async def lookup(self, provider: str | None, model: str | None) -> ServerAnswer:
        """The server's window for the model, or ``tokens=None`` with the reason; never raises."""
        server = self.server_for(provider, model)
        if server is None or not model:
            return ServerAnswer(None, None, None)
        return await self.lookup_on(server, model)

    async def summarizer_window(self, config: SummarizerConfig) -> int | None:
        """The summariser's window: configured, else its server's listing, else the catalog's; never raises."""
        if config.context_window_tokens is not None:
            return config.context_window_tokens
        served = (await self.lookup_on(config.server, config.model)).tokens
        if served is not None:
            return served
        known = self._catalog.lookup(None, config.model)
        return known.context_window if known else None

    async def lookup_on(self, server: ModelServer, model: str) -> ServerAnswer:
        """``server``'s window for ``model``, or ``tokens=None`` with the reason; never raises."""
        url = models_url(server.base_url)
        listing = await self._listing(server, url)
        named = shown(url)
        if listing.problem is not None:
            return ServerAnswer(None, named, shown(f"model server {named} gave no window: {listing.problem}"))
        if model not in listing.windows:
            return ServerAnswer(None, named, f"model server {named} does not list model {model!r}")
        tokens = listing.windows[model]
        if tokens is None:
            return ServerAnswer(None, named, f"model server {named} lists {model!r} without max_model_len")
        return ServerAnswer(tokens, named)

    async def resolve(self, provider: str | None, model: str | None, *, session_tokens: int | None) -> ContextWindow:
        """The window by the one order: server, configured per model, session, catalog, none."""
        answer = await self.lookup(provider, model)
        known = self._catalog.lookup(provider, model)
        return resolve_window(
            provider=provider,
            model=model,
            server_tokens=answer.tokens,
            configured=self._config.context_window_tokens,
            session_tokens=session_tokens,
            server_notes=answer.notes,
            catalog_tokens=known.context_window if known else None,
        )

    async def _listing(self, server: ModelServer, url: str) -> _Listing:
        cached = self._fresh(url)
        if cached is not None:
            return cached
        # One fetch per server at a time: concurrent requests on an expired entry wait for the same answer
        # instead of stampeding a server that may be the one already struggling.
        lock = self._locks.setdefault(url, asyncio.Lock())
        async with lock:
            cached = self._fresh(url)
            if cached is not None:
                return cached
            listing = await self._fetch(server, url)
            self._listings[url] = listing
            return listing

    def _fresh(self, url: str) -> _Listing | None:
        listing = self._listings.get(url)
        if listing is None:
            return None
        ttl = self._config.ttl_seconds if listing.problem is None else self._config.failure_ttl_seconds
        if self._clock() - listing.fetched_at < ttl:
            return listing
        return None

    async def _fetch(self, server: ModelServer, url: str) -> _Listing:
        headers = {"Accept": "application/json"}
        if server.api_key:
            headers["Authorization"] = f"Bearer {server.api_key}"
        timeouts = self._config.timeouts
        try:
            async with asyncio.timeout(timeouts.total_seconds):
                response = await self._client.get(url, headers=headers, timeout=http_timeout(timeouts))
            if response.status_code != 200:
                return self._failed(f"HTTP {response.status_code}")
            windows = windows_from_listing(response.json())
        except TimeoutError:
            return self._failed(f"no answer within {timeouts.total_seconds}s")
        except httpx.TimeoutException as error:
            return self._failed(f"timed out ({type(error).__name__})")
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            # InvalidURL is no HTTPError: a mistyped base URL in the settings must fall through too.
            return self._failed(f"unreachable ({type(error).__name__}: {error})")
        except ValueError as error:
            # JSONDecodeError is a ValueError, and so is a body without a model list.
            return self._failed(f"unreadable answer ({error})")
        return _Listing(self._clock(), windows, None)

    def _failed(self, problem: str) -> _Listing:
        return _Listing(self._clock(), {}, problem)
