"""CPU-heavy steps (preparing a large batch, building or redacting a large view, planning a prune or a
compaction of a long history, encoding a large answer) run in a worker thread once their weight passes
``OFF_LOOP_WEIGHT``, so the event loop keeps answering every other request (``/healthz`` included) meanwhile.
Light ones stay inline: a thread hop costs tens of microseconds."""

from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

from anyio import fail_after, to_thread

from app.errors import ServiceUnavailable

OFF_LOOP_WEIGHT = 2_000
"""The weight from which a step runs in a worker thread: a content part, or a kilobyte of text, weighs one, so
this is a few milliseconds of work."""

TEXT_UNIT = 1024

P = ParamSpec("P")
T = TypeVar("T")


async def run_weighed(weight: int, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)``, in a worker thread when ``weight`` says it is heavy."""
    if weight < OFF_LOOP_WEIGHT:
        return function(*args, **kwargs)
    return await to_thread.run_sync(lambda: function(*args, **kwargs))


async def run_within(seconds: float, weight: int, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``run_weighed`` with a time budget: past ``seconds`` the request answers 503 (the thread, which
    cannot be stopped, finishes on its own and its result is dropped)."""
    if weight < OFF_LOOP_WEIGHT:
        return function(*args, **kwargs)
    try:
        with fail_after(seconds):
            return await to_thread.run_sync(lambda: function(*args, **kwargs), abandon_on_cancel=True)
    except TimeoutError:
        raise ServiceUnavailable(
            f"The answer took longer than its {seconds:g} s budget; ask for a smaller page."
        ) from None


def content_weight(contents: Iterable[Any]) -> int:
    """What a list of message contents weighs: one per part and per kilobyte of text, the text at any depth
    of a part counted (a JSON tool output nests its text). Stops counting once the weight is known to be
    heavy, so weighing a huge batch costs little."""
    weight = 0
    for content in contents:
        weight += 1 + len(content) // TEXT_UNIT if isinstance(content, str) else sum(map(_part_weight, content))
        if weight >= OFF_LOOP_WEIGHT:
            break
    return weight


def _part_weight(part: Any) -> int:
    return 1 + _text_length(part) // TEXT_UNIT if isinstance(part, dict) else 1


def _text_length(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(map(_text_length, value.values()))
    if isinstance(value, list):
        return sum(map(_text_length, value))
    return 0
