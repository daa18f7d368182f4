"""A read a hot standby cancels to go on replaying is a retryable 503, not an unexpected error."""

from app.api.problems import database_problem
from app.errors import ServiceUnavailable


def test_a_read_cancelled_by_a_conflict_with_replication_is_503() -> None:
    problem = database_problem("40001", connection_lost=False)
    assert isinstance(problem, ServiceUnavailable)
    assert "replica" in problem.detail
