"""Model references: which model a session, a run, an assistant message or a request names, read one way.

Runtimes write a model as ``provider/modelId`` (``anthropic/claude-sonnet-4-5``; the id may hold more
slashes: ``openrouter/anthropic/claude-sonnet-4.5`` is the ``openrouter`` provider's model
``anthropic/claude-sonnet-4.5``), as a bare id (``claude-sonnet-4-5``; Gemini's ``models/gemini-2.5-pro`` is
one too), or as opencode's object ``{"providerID": ..., "modelID": ..., "variant"?: ...}``. ``model_ref``
reads all three, and every rule that asks which model produced something or is targeted (the reasoning rule,
the usage rule, the cost, the payload's target) asks through it and ``producer``, so a run stored as
``anthropic/claude-sonnet-4-5`` and a message naming ``claude-sonnet-4-5`` are the same model everywhere.
Pure: no I/O.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ModelRef:
    provider: str | None
    """As written (``anthropic``, ``google``, ``openai-responses``, ``google.vertex.anthropic.messages``...)."""
    model: str | None
    """The provider's model id; ``None`` when only the provider is known."""
    variant: str | None = None
    """opencode's variant (a reasoning effort such as ``high``), when the reference carries one."""

    @property
    def family(self) -> str | None:
        return provider_family(self.provider)

    def reference(self) -> str | None:
        """``provider/modelId``, or the bare id when the provider is unknown."""
        if self.model is None:
            return None
        return f"{self.provider}/{self.model}" if self.provider else self.model


def model_ref(value: object) -> ModelRef | None:
    """The reference ``value`` holds, or ``None`` when it names no model (absent, blank, another shape)."""
    if isinstance(value, ModelRef):
        return value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if text.startswith("models/"):
            return ModelRef(None, text.removeprefix("models/"))
        provider, slash, model = text.partition("/")
        if slash and provider and model:
            return ModelRef(provider, model)
        return ModelRef(None, text)
    if isinstance(value, Mapping):
        named = _text(value.get("modelID")) or _text(value.get("id"))
        if named is None:
            return None
        return ModelRef(_text(value.get("providerID")), named, _text(value.get("variant")))
    return None


def target_ref(provider: str | None, model: object) -> ModelRef | None:
    """The model a request targets: ``model`` in any form; ``provider`` (the request's) names the provider
    when the reference does not. A payload format such as ``ai-sdk`` is no provider: its model names one."""
    found = model_ref(model)
    if found is None:
        return ModelRef(provider, None) if provider else None
    return found if found.provider else ModelRef(provider, found.model, found.variant)


def model_id(value: object) -> str | None:
    """The model id a reference names, whatever its form."""
    found = model_ref(value)
    return found.model if found else None


def producer(metadata: Mapping[str, Any], run_model: object = None) -> ModelRef | None:
    """The model that wrote an assistant message: its own ``metadata.model`` (any form; ``metadata.provider``
    names the provider when the model does not), else its run's model, else only its provider if it names one."""
    provider = _text(metadata.get("provider"))
    own = model_ref(metadata.get("model"))
    if own is not None:
        return ModelRef(provider or own.provider, own.model, own.variant)
    run = model_ref(run_model)
    if run is not None:
        return run if provider is None or run.provider is not None else ModelRef(provider, run.model, run.variant)
    return ModelRef(provider, None) if provider else None


def same_model(produced: ModelRef | None, target: ModelRef | None) -> bool:
    """One model, whoever serves it: what the usage rule asks (tokens are counted by the model). An alias and a
    snapshot it names are one model (a request for ``claude-sonnet-4-5`` is answered as
    ``claude-sonnet-4-5-20250929``, ``gpt-4o`` as ``gpt-4o-2024-08-06``); two snapshots are two."""
    if produced is None or target is None or produced.model is None or target.model is None:
        return False
    if produced.model == target.model:
        return True
    one_is_alias = _DATE.search(produced.model) is None or _DATE.search(target.model) is None
    return one_is_alias and undated(produced.model) == undated(target.model)


def undated(model: str) -> str:
    """The alias a model id answers to: without its snapshot date (``-20250929``, ``-2024-08-06``) or
    ``-latest``; an id with neither is its own alias."""
    return _SNAPSHOT.sub("", model) or model


_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def same_producer(produced: ModelRef | None, target: ModelRef | None) -> bool:
    """One model id at one provider family: what the reasoning rule asks (signatures and item ids are bound to
    the API that issued them). Both sides must name their provider."""
    return (
        same_model(produced, target)
        and produced is not None
        and target is not None
        and produced.family is not None
        and produced.family == target.family
    )


def provider_family(provider: object) -> str | None:
    """The API family behind a provider name, as the AI SDK, opencode, pi and the payload targets spell it:
    ``gemini``, ``google-vertex`` and ``google.generative-ai`` are ``google``; ``openai-responses`` and
    ``azure`` are ``openai``; ``google.vertex.anthropic.messages`` and ``amazon-bedrock-anthropic`` are
    ``anthropic`` (Claude's signatures, wherever it is served). Another name is its own family, lowercased."""
    if not isinstance(provider, str) or not provider.strip():
        return None
    name = provider.strip().lower()
    for family, words in _FAMILY_WORDS:
        if any(word in name for word in words):
            return family
    return name


_FAMILY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("anthropic", ("anthropic", "claude")),
    ("openai", ("openai", "azure")),
    ("google", ("google", "gemini", "vertex")),
)
"""Checked in order: ``google.vertex.anthropic.messages`` is Claude before it is Google."""


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
