"""CPU-heavy steps (preparing a large batch, building or redacting a large view, encoding a large answer) run
in a worker thread once their weight passes ``OFF_LOOP_WEIGHT``, so the event loop keeps answering every other
request (``/healthz`` included) meanwhile. Light ones stay inline: a thread hop costs tens of microseconds."""

from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

from anyio import to_thread

OFF_LOOP_WEIGHT = 2_000
"""About a millisecond of work: a content part, or a kilobyte of text, weighs one."""

TEXT_UNIT = 1024

P = ParamSpec("P")
T = TypeVar("T")


async def run_weighed(weight: int, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    if weight < OFF_LOOP_WEIGHT:
        return function(*args, **kwargs)
    return await to_thread.run_sync(lambda: function(*args, **kwargs))


def content_weight(contents: Iterable[Any]) -> int:
    """What a list of message contents weighs: one per part, one per kilobyte of plain text."""
    return sum(len(content) // TEXT_UNIT if isinstance(content, str) else len(content) for content in contents)
