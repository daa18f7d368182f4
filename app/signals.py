"""Ends the live event streams as soon as the server is told to stop.

uvicorn's graceful shutdown waits for every open response to finish before it runs the lifespan's shutdown,
and an event stream never finishes by itself: without a word from the signal, the server would wait out its
whole grace period (or forever, with none). uvicorn keeps the signal to itself, so the handler it installed is
wrapped: ours runs first, then uvicorn's, unchanged. Signals reach only the main thread; a server run in
another thread (as in tests) closes the streams itself.
"""

import signal
import threading
from collections.abc import Callable
from types import FrameType

EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def on_exit_signal(action: Callable[[], None]) -> Callable[[], None]:
    """Runs ``action`` (which must be safe in a signal handler) before the current handlers of SIGINT and
    SIGTERM; returns what puts those handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {number: signal.getsignal(number) for number in EXIT_SIGNALS}

    def handle(number: int, frame: FrameType | None) -> None:
        action()
        handler = previous[signal.Signals(number)]
        if callable(handler):
            handler(number, frame)
        elif handler == signal.SIG_DFL:
            signal.signal(number, signal.SIG_DFL)
            signal.raise_signal(number)

    for number in EXIT_SIGNALS:
        signal.signal(number, handle)

    def restore() -> None:
        for number, handler in previous.items():
            if signal.getsignal(number) is handle:
                signal.signal(number, handler)

    return restore
