"""Responses encoded with orjson: several times faster than the standard library on large histories."""

from typing import Any

import orjson
from starlette.responses import JSONResponse


class OrjsonResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        # Every body is built from JSON (str keys) or from literal dicts; without OPT_NON_STR_KEYS orjson
        # writes a 23 MB model view in two thirds of the time (bench/overhead.py).
        return orjson.dumps(content)


class ProblemResponse(OrjsonResponse):
    media_type = "application/problem+json"
