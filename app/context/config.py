"""Configuration of context handling as plain values, so the core never reads settings or the environment.

The service's one settings class (``app/settings.py``) maps its fields onto these dataclasses; tests build
them directly. Every default here is explained where it is declared, because each one is a trade-off a
user may want to change.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ModelServer:
    """An OpenAI-compatible model server (vLLM, SGLang, LM Studio, a gateway...)."""

    base_url: str
    """With or without a trailing ``/v1``: ``http://gpu:8000`` and ``http://gpu:8000/v1`` both work."""
    api_key: str | None = None
    """Sent as ``Authorization: Bearer``; many local servers need none."""


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect_seconds: float = 1.0
    read_seconds: float = 2.0
    total_seconds: float = 3.0
    """A hard cap on one whole exchange: httpx timeouts are per operation, so a server that drips bytes
    could otherwise hold a request far longer than any single timeout."""


@dataclass(frozen=True, slots=True)
class WindowConfig:
    """Where the context window of a model comes from (a model server, then the configuration, then the session)."""

    servers_by_model: Mapping[str, ModelServer] = field(default_factory=dict)
    """Keyed by ``provider/modelId`` or by the bare model id; a model's own server beats its provider's."""
    servers_by_provider: Mapping[str, ModelServer] = field(default_factory=dict)
    """Keyed by provider name, for every model of that provider without an entry of its own."""
    context_window_tokens: Mapping[str, int] = field(default_factory=dict)
    """Configured windows, keyed by ``provider/modelId`` or by the bare model id (the exact key wins)."""
    ttl_seconds: float = 300.0
    """How long a server's answer is trusted. A served model's ``max_model_len`` changes only on a restart,
    so five minutes costs at most one request per server per five minutes and still notices a redeploy."""
    failure_ttl_seconds: float = 30.0
    """How long a failed probe is remembered, so a dead server does not add a timeout to every request,
    while a server that comes back is used again within half a minute."""
    timeouts: Timeouts = field(default_factory=Timeouts)
    """Short: the window is a hint, and a request must never wait long for it."""


@dataclass(frozen=True, slots=True)
class ThresholdPolicy:
    """When compaction is due.

    threshold = min(floor(window * ratio), window - reserve), where reserve is the request's maximum output
    tokens (or ``reserved_output_tokens``), never more than half the window; ``threshold_tokens`` replaces
    the ratio when set. Compaction is due when the counted tokens reach the threshold (``>=``).

    Why 0.8: the count is partly a chars/4 estimate that can be off by a fifth or more on code and
    non-Latin text, and the summariser itself must fit the history plus its answer in the same window;
    0.8 leaves that margin on every window size, where a fixed reserve alone (pi's 16k, Claude Code's 33k)
    leaves nothing on the 8k-32k windows that local vLLM models often serve. The output reservation then
    guarantees room for the answer on large windows. Capping it at half the window keeps a request whose
    ``maxOutputTokens`` alone fills the window from being "due" forever: that is a request error, not
    something compaction can fix.
    """

    ratio: float = 0.8
    reserved_output_tokens: int | None = None
    """The default reservation when a request names no ``maxOutputTokens``; none by default because the
    ratio already leaves a fifth of the window."""
    threshold_tokens: int | None = None
    """An absolute threshold, for operators who know their model's sweet spot; still capped by the window."""


@dataclass(frozen=True, slots=True)
class TailPolicy:
    """How much recent history a compaction keeps verbatim after the summary.

    The tail is the longest suffix within both budgets, then moved so that it never starts between a tool
    call and its result. Why 20k tokens: recent tool outputs and the exact last exchanges are what the model
    needs verbatim (pi keeps 20k; Claude Code 10k-40k). Why at most a quarter of the window: after a
    compaction the context must sit well below the threshold, or the next turn compacts again (the
    compaction-loop bug agents keep reporting); a quarter plus a summary leaves over half the window free.
    """

    max_tokens: int = 20_000
    max_window_fraction: float = 0.25
    max_user_turns: int | None = None
    """Keep at most this many user turns (each user input and what followed it); none means no turn limit."""


@dataclass(frozen=True, slots=True)
class PrunePolicy:
    """Which old tool results get ``compactedAt`` (opencode's prune, with its proven numbers).

    The last ``protect_user_turns`` user turns are never touched: the model is still working with them.
    Walking back from there, tool output is kept until ``protect_tool_tokens`` have been seen; older results
    are candidates. Pruning happens only when it saves at least ``minimum_savings_tokens``, because every
    prune changes the prompt prefix and so throws away the provider's prompt cache: a small saving is not
    worth a full cache miss.
    """

    protect_user_turns: int = 2
    protect_tool_tokens: int = 40_000
    minimum_savings_tokens: int = 20_000
    protected_tool_names: frozenset[str] = frozenset({"skill"})
    """Tools whose output is instructions rather than data (opencode protects ``skill``): clearing it would
    change how the agent behaves, not just what it remembers."""


@dataclass(frozen=True, slots=True)
class SummarizerConfig:
    """An OpenAI-compatible chat endpoint that writes compaction summaries."""

    server: ModelServer
    model: str
    max_output_tokens: int = 8_192
    """Room for a thorough summary plus a reasoning model's thinking (vLLM counts it against max_tokens);
    an answer cut at this limit is refused, never stored half-written."""
    temperature: float = 0.0
    """Summaries should be faithful, not creative."""
    tool_result_chars: int = 2_000
    """Each tool result in the transcript is cut to this many characters (pi, opencode): the summary needs
    what a tool found, not its full output."""
    context_window_tokens: int | None = None
    """The summariser's window, for a server that does not list it (vLLM lists ``max_model_len``); with
    neither, the catalog's for a known model. A history too long for it is summarised in parts."""
    require_template_headings: bool = True
    """Refuse an answer that has none of the template's section headings: it is most likely the model
    continuing the task instead of summarising it."""
    timeouts: Timeouts = field(
        default_factory=lambda: Timeouts(connect_seconds=2.0, read_seconds=120.0, total_seconds=180.0)
    )
    """Generous: writing a summary of a long history takes a model a while, and a manual compaction waits."""
