"""``project(view, messages, ctx)``: the one entry point to the five views.

Dispatch on ``View`` is exhaustive: a view added to the enum and forgotten here fails the type check.
Pure; never reads storage, the clock or provider formats.
"""

from collections.abc import Sequence
from typing import assert_never

from app.engine.message import EngineMessage
from app.projections.compact import project_compact
from app.projections.debug import project_debug
from app.projections.export import project_export
from app.projections.model import project_model
from app.projections.transcript import project_transcript
from app.projections.types import Projection, ProjectionContext, View


def project(
    view: View,
    messages: Sequence[EngineMessage],
    ctx: ProjectionContext,
    *,
    window: Sequence[EngineMessage] | None = None,
) -> Projection:
    """``window``: the debug view of a page judges the model decisions over the live history the model view
    reads (``None``: over ``messages``); the other views ignore it."""
    match view:
        case View.TRANSCRIPT:
            return project_transcript(messages, ctx)
        case View.MODEL:
            return project_model(messages, ctx)
        case View.COMPACT:
            return project_compact(messages, ctx)
        case View.DEBUG:
            return project_debug(messages, ctx, window)
        case View.EXPORT:
            return project_export(messages, ctx)
        case _:
            assert_never(view)
