"""Responses encoded with orjson: several times faster than the standard library on large histories.

A body holding stored text with an unpaired UTF-16 surrogate (which orjson refuses) is written by the
standard library instead, spelling each one as the escape it arrived as (``app.lossless_json``): only
responses holding such a message pay for it."""

from typing import Any

from starlette.responses import JSONResponse, Response

from app import lossless_json


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
