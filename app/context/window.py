"""The context window of a model, and where that number came from.

One order, everywhere: the model server's ``max_model_len``, then the configured ``contextWindowTokens``
for the model, then the session's ``contextWindowTokens``, then the model catalog's window, else none, and
with none compaction is never proposed. What the operator or the caller says beats the catalog, because
they know the deployment (a gateway with a smaller window, a beta header that raises it); the catalog only
fills the gap, so that a model it knows is never left without compaction. Pure: the server's answer is looked
up by ``model_server`` and the catalog's by ``catalog``, and both are passed in.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

WindowSource = Literal["model_server", "model_config", "session", "catalog", "none"]


@dataclass(frozen=True, slots=True)
class ContextWindow:
    tokens: int | None
    source: WindowSource
    notes: tuple[str, ...] = ()
    """Why a better source was not used (the server timed out, a configured value was not positive...)."""

    def as_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "source": self.source, "notes": list(self.notes)}


def model_keys(provider: str | None, model: str | None) -> tuple[str, ...]:
    """The keys a per-model setting is looked up under, most specific first."""
    if not model:
        return ()
    if provider:
        return (f"{provider}/{model}", model)
    return (model,)


def resolve_window(
    *,
    provider: str | None,
    model: str | None,
    server_tokens: int | None,
    configured: Mapping[str, int],
    session_tokens: int | None,
    server_notes: tuple[str, ...] = (),
    catalog_tokens: int | None = None,
) -> ContextWindow:
    """Pick the window by the one order; ``server_notes`` says why the server gave nothing, if it did not."""
    notes = list(server_notes)
    if _positive(server_tokens):
        return ContextWindow(server_tokens, "model_server", tuple(notes))
    if server_tokens is not None:
        notes.append(f"model server reported a non-positive window ({server_tokens}); ignored")
    for key in model_keys(provider, model):
        if key not in configured:
            continue
        value = configured[key]
        if _positive(value):
            return ContextWindow(value, "model_config", tuple(notes))
        notes.append(f"configured contextWindowTokens for {key!r} is not positive ({value!r}); ignored")
    if _positive(session_tokens):
        return ContextWindow(session_tokens, "session", tuple(notes))
    if session_tokens is not None:
        notes.append(f"session contextWindowTokens is not positive ({session_tokens!r}); ignored")
    if _positive(catalog_tokens):
        return ContextWindow(catalog_tokens, "catalog", tuple(notes))
    notes.append("no context window known: compaction is never proposed")
    return ContextWindow(None, "none", tuple(notes))


def _positive(value: object) -> TypeGuard[int]:
    # bool is an int subclass; a stray True must not become a one-token window.
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
