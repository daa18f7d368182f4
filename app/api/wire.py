"""The base for every wire model: camelCase over the wire, snake_case in Python, unknown fields refused, and
NaN and Infinity (which Python's JSON reader accepts, and PostgreSQL would store as null) refused."""

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", serialize_by_alias=True, allow_inf_nan=False
    )
