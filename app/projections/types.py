"""The values every view shares: its context, its messages and its diagnostics."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from app.engine.kinds import Kind, Role
from app.engine.persisted import Content

PROJECTOR_VERSION = "3"
"""Bumped whenever a view's output changes for the same input (``tests/api/test_projector_version.py`` pins
each version's answers); part of every projection ETag, so a view kept from before an upgrade is not revalidated."""


class View(StrEnum):
    TRANSCRIPT = "transcript"
    MODEL = "model"
    COMPACT = "compact"
    DEBUG = "debug"
    EXPORT = "export"


ReasoningFallback = Literal["drop", "text"]


@dataclass(frozen=True, slots=True)
class ProjectionContext:
    model: str | None = None
    """The target's model id; reasoning goes in natively only when it matches the producer's."""
    provider: str | None = None
    include_reasoning: bool = True
    reasoning_fallback: ReasoningFallback = "drop"
    include_tool_results: bool = True
    tool_result_soft_limit_chars: int = 50_000
    apply_compact_boundary: bool = True
    inject_runtime_reminder: bool = True
    redact: bool = False
    """Export only: mask secrets in text, tool inputs and tool outputs."""
    readable_media: tuple[str, ...] | None = None
    """Media types the target model reads (``image/*``, ``application/pdf``, ``*/*``); ``None`` means every
    medium the history holds is passed on (the provider adapter knows its limits), ``()`` means text only.
    Media outside the list becomes explicit text in the model view, never a silent drop."""
    run_models: Mapping[str, object] = field(default_factory=dict)
    """The model each run names (``provider/modelId``, a bare id or opencode's object), by run id: an
    assistant message that names no model of its own was produced by its run's (``app.engine.model_ref``)."""


@dataclass(slots=True)
class ProjectedMetadata:
    hidden_from_transcript: bool = False
    hidden_from_model: bool = False
    truncated: bool = False
    compacted: bool = False
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    """View-specific facts (the debug view puts the original metadata and kind reasons here)."""


@dataclass(slots=True)
class ProjectedMessage:
    view: View
    role: Role
    semantic_type: Kind
    source_message_ids: tuple[str, ...]
    content: Content
    metadata: ProjectedMetadata = field(default_factory=ProjectedMetadata)
    reasoning: tuple[dict[str, Any], ...] = ()
    """The parts of ``content`` that carry the stored message's reasoning, native or turned into text (the
    model and compact views set it): what the token accounting counts as reasoning. Never sent as such."""
    unusual_text: bool = False
    """Made from a message marked at write time as holding a NUL or an unpaired UTF-16 surrogate: the
    serializer cleans such text for the provider, and only in such messages."""


@dataclass(frozen=True, slots=True)
class Repair:
    """One change made so that a payload is valid; nothing is changed silently."""

    rule: str
    detail: str
    message_ids: tuple[str, ...] = ()


@dataclass(slots=True)
class Diagnostics:
    hidden_message_ids: list[str] = field(default_factory=list)
    truncated_message_ids: list[str] = field(default_factory=list)
    applied_compact_boundary_id: str | None = None
    injected_notes: list[str] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    """Per source message id, why the view hid, cut, stubbed or changed it (what the debug view shows)."""


@dataclass(slots=True)
class Projection:
    view: View
    messages: list[ProjectedMessage]
    diagnostics: Diagnostics
