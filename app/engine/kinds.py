"""The seventeen engine-message kinds and the roles that may carry them."""

from enum import StrEnum
from typing import Literal

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


class Kind(StrEnum):
    SYSTEM_NOTE = "system_note"
    USER_INPUT = "user_input"
    ASSISTANT_TEXT = "assistant_text"
    ASSISTANT_REASONING = "assistant_reasoning"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    TOOL_APPROVAL_REQUEST = "tool_approval_request"
    TOOL_APPROVAL_RESPONSE = "tool_approval_response"
    COMPACT_BOUNDARY = "compact_boundary"
    COMPACT_SUMMARY = "compact_summary"
    RUNTIME_REMINDER = "runtime_reminder"
    HANDOFF_SUMMARY = "handoff_summary"
    AGENT_SWITCH_NOTE = "agent_switch_note"
    MODEL_SWITCH_NOTE = "model_switch_note"
    """A runtime fact: the session's model (or its settings, such as the thinking level) changed."""
    BASH_EXECUTION = "bash_execution"
    CUSTOM = "custom"
    BRANCH_SUMMARY = "branch_summary"


RESERVED_RUNTIME_KINDS: frozenset[Kind] = frozenset(
    {
        Kind.COMPACT_BOUNDARY,
        Kind.COMPACT_SUMMARY,
        Kind.RUNTIME_REMINDER,
        Kind.HANDOFF_SUMMARY,
        Kind.AGENT_SWITCH_NOTE,
        Kind.MODEL_SWITCH_NOTE,
        Kind.BRANCH_SUMMARY,
    }
)
"""Kinds only a ``runtime`` caller may write: they steer what the model sees."""
