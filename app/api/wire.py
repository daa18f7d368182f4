"""The base for every wire model: camelCase over the wire, snake_case in Python, unknown fields refused, and
NaN and Infinity (which Python's JSON reader accepts, and PostgreSQL would store as null) refused."""

from pydantic import BaseModel

from app.engine.parts import WIRE_CONFIG


class WireModel(BaseModel):
    model_config = WIRE_CONFIG
