"""JSON text for the database in which every float stays a float, in ``jsonb`` too.

``jsonb`` holds a number as ``numeric``, which keeps the digits after a decimal point but reads an exponent
into a plain integer: the float ``1e16`` is written ``1e+16`` (orjson and the standard library both spell a
float that large so), ``jsonb`` keeps ``10000000000000000`` and it comes back as an integer, while JSON, and
the service's idempotency, tell ``1`` and ``1.0`` apart (and ``1.2345678901234567e+19`` would come back as
``12345678901234567000``, another number). Such a float is written out in full with ``.0``, which ``numeric``
keeps. A negative exponent needs nothing (its digits are after the point). ``numeric`` has no negative
zero: ``-0.0`` reads back as ``0.0``.

A document holding no ``e+`` (nearly all) is encoded once; one that does is walked and encoded again.
"""

from decimal import Decimal
from typing import Any

import orjson

from app import lossless_json


def jsonb_text(value: Any) -> str:
    try:
        encoded = orjson.dumps(value)
    except orjson.JSONEncodeError:
        # An unpaired surrogate: only message content holds one unescaped, in a ``json`` column, which
        # keeps its text as written.
        return lossless_json.dumps_slowly(value).decode()
    if b"e+" in encoded:
        encoded = orjson.dumps(_positional_floats(value))
    return encoded.decode()


def _positional_floats(value: Any) -> Any:
    if isinstance(value, float):
        spelled = repr(value)
        return orjson.Fragment(format(Decimal(spelled), "f") + ".0") if "e+" in spelled else value
    if isinstance(value, dict):
        return {key: _positional_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_positional_floats(item) for item in value]
    return value
