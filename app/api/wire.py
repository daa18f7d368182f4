"""The base for every wire model: camelCase over the wire, snake_case in Python, unknown fields refused."""

from pydantic import BaseModel

from app.engine.parts import WIRE_CONFIG


class WireModel(BaseModel):
    model_config = WIRE_CONFIG
