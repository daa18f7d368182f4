"""Responses encoded with orjson: several times faster than the standard library on large histories. A large
answer is encoded in a worker thread: whole (``encode_json``), or as a stream of pieces (``streamed_json``),
so no single bytes object holds all of it.

A body holding stored text with an unpaired UTF-16 surrogate (which orjson refuses) is written by the
standard library instead, spelling each one as the escape it arrived as (``app.lossless_json``): only
responses holding such a message pay for it."""

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from starlette.responses import JSONResponse, Response

from app import lossless_json
from app.api.streaming import ClosingStreamingResponse
from app.services.heavy_work import OFF_LOOP_WEIGHT


class OrjsonResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        # Every body is built from JSON (str keys) or from literal dicts; without OPT_NON_STR_KEYS orjson
        # writes a 23 MB model view in two thirds of the time (bench/overhead.py).
        return lossless_json.dumps(content)


class ProblemResponse(OrjsonResponse):
    media_type = "application/problem+json"


class EncodedJsonResponse(Response):
    """A JSON body encoded beforehand (in a worker thread, when large: ``encode_json``)."""

    media_type = "application/json"


def encode_json(content: Any) -> bytes:
    return lossless_json.dumps(content)


STREAM_PIECE_BYTES = 1024 * 1024
"""The pieces a streamed answer is written in: each is encoded in a worker thread, one at a time."""


def streamed_json(
    before: Mapping[str, Any], key: str, items: Sequence[Any], after: Mapping[str, Any], *, headers: Mapping[str, str]
) -> ClosingStreamingResponse:
    """The object ``{**before, key: items, **after}``, its items encoded a run at a time as the client reads
    (Starlette runs each step of a plain iterator in a worker thread). A run is encoded as one array, with its
    brackets cut off: one item first, then each run twice the last, at most what makes about a piece at the
    bytes an item of the last run took. So a long model view takes a few dozen encoder calls instead of one
    an item (10,000), and a run reaches past a piece only when its items are far larger than the last run's."""

    def pieces() -> Iterator[bytes]:
        opening = encode_json(before)[:-1] + (b"," if before else b"") + encode_json(key) + b":["
        closing = encode_json(after)[1:]
        piece: list[bytes | memoryview] = [opening]
        size = len(opening)
        start, run = 0, 1
        while start < len(items):
            encoded = encode_json(items[start : start + run])
            if start:
                piece.append(b",")
            piece.append(memoryview(encoded)[1:-1])
            size += len(encoded)
            taken = min(run, len(items) - start)
            start += taken
            run = max(1, min(2 * taken, STREAM_PIECE_BYTES * taken // len(encoded)))
            if size >= STREAM_PIECE_BYTES:
                yield b"".join(piece)
                piece, size = [], 0
        piece.append(b"]," + closing if after else b"]" + closing)
        yield b"".join(piece)

    return ClosingStreamingResponse(pieces(), media_type="application/json", headers=dict(headers))


def json_answer(
    before: Mapping[str, Any],
    key: str,
    items: Sequence[Any],
    after: Mapping[str, Any],
    *,
    weight: int,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """``{**before, key: items, **after}``: encoded here when light, streamed from a worker thread when its
    ``weight`` (``heavy_work.content_weight``) says it is large."""
    if weight < OFF_LOOP_WEIGHT:
        return OrjsonResponse({**before, key: items, **after}, headers=headers)
    return streamed_json(before, key, items, after, headers=headers or {})
