"""A page cut by its budget: always at least one row (so a walk moves on), never a row more than fits
unless it is the only one, and never fewer than fit."""

from hypothesis import given
from hypothesis import strategies as st

from app.store.messages import PageBudget

SIZES = st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 50)), max_size=30)


@given(sizes=SIZES, max_bytes=st.integers(1, 3000), max_parts=st.integers(1, 100))
def test_a_page_takes_the_longest_prefix_within_the_budget_and_at_least_one_row(
    sizes: list[tuple[int, int]], max_bytes: int, max_parts: int
) -> None:
    taken = PageBudget(max_bytes=max_bytes, max_parts=max_parts).rows_within(sizes)

    def fits(count: int) -> bool:
        return sum(size for size, _ in sizes[:count]) <= max_bytes and sum(p for _, p in sizes[:count]) <= max_parts

    assert taken == len(sizes) or not fits(taken + 1)
    assert (taken >= 1) == bool(sizes)
    assert taken <= 1 or fits(taken)
