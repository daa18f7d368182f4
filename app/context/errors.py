"""Why a compaction was refused or a summary could not be had; each carries a stable ``reason`` code.

The API maps these onto its problem+json family (a refusal is the caller's 4xx, a summariser failure a
502): the codes are stable, the messages are for people. Raising one means nothing was written.
"""

from typing import Literal

RefusalReason = Literal[
    "empty_summary",
    "nothing_to_compact",
    "unknown_through_message",
    "through_splits_tool_pair",
]

SummarizerFailure = Literal[
    "unreachable",
    "timeout",
    "http_status",
    "bad_response",
    "empty_summary",
    "truncated",
    "off_template",
    "window_too_small",
    "too_many_parts",
]


class CompactionRefused(ValueError):
    def __init__(self, reason: RefusalReason, detail: str) -> None:
        super().__init__(detail)
        self.reason: RefusalReason = reason
        self.detail = detail


class SummarizerError(RuntimeError):
    def __init__(self, reason: SummarizerFailure, detail: str) -> None:
        super().__init__(detail)
        self.reason: SummarizerFailure = reason
        self.detail = detail
