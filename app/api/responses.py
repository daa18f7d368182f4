"""Responses encoded with orjson: several times faster than the standard library on large histories."""

from typing import Any

import orjson
from starlette.responses import JSONResponse


class OrjsonResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)


class ProblemResponse(OrjsonResponse):
    media_type = "application/problem+json"
