"""The compact view: exactly the history a new summary must cover.

It is the model view's context (from the previous summary on, so an iterative summary keeps what the last
one said) prepared for a summarizer: tool outputs cut to ``COMPACT_TOOL_RESULT_CHARS``, media as short
stubs, reasoning never native (a summarizer is another request; ``reasoningFallback`` decides between text
and nothing), and no runtime reminders, which are steering rather than history. Never decides when to
compact; that is the caller's.
"""

from collections.abc import Sequence

from app.engine.message import EngineMessage
from app.projections.model import ViewPolicy, build_view
from app.projections.types import Projection, ProjectionContext, View

COMPACT_TOOL_RESULT_CHARS = 2_000
"""About what coding agents keep of each tool output for their summarizers: enough to tell what the tool said,
little enough that a long history fits one summarizer request."""

COMPACT_POLICY = ViewPolicy(
    View.COMPACT,
    media_style="stub",
    native_reasoning=False,
    inject_reminders=False,
    soft_limit_cap=COMPACT_TOOL_RESULT_CHARS,
)


def project_compact(messages: Sequence[EngineMessage], ctx: ProjectionContext) -> Projection:
    return build_view(messages, ctx, COMPACT_POLICY)
