"""Invariants that every view built for a model must keep, checked by the property tests."""

from app.projections.pairing import call_ids, result_ids
from app.projections.types import ProjectedMessage


def assert_calls_next_to_results(messages: list[ProjectedMessage]) -> None:
    """Between a call and its first result (no reuse of the id between), only tool messages."""
    for i, message in enumerate(messages):
        for call_id in call_ids(message):
            for j in range(i + 1, len(messages)):
                if call_id in result_ids(messages[j]):
                    between = messages[i + 1 : j]
                    assert all(m.role == "tool" for m in between), (call_id, i, j)
                    break
                if call_id in call_ids(messages[j]):
                    break
