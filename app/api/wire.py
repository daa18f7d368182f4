"""The base for every wire model: camelCase over the wire, snake_case in Python, unknown fields refused, and
NaN and Infinity (which Python's JSON reader accepts, and PostgreSQL would store as null) refused; and
``TextLength``, the one way to limit a stored string's length."""

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema


class WireModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", serialize_by_alias=True, allow_inf_nan=False
    )


@dataclass(frozen=True, slots=True)
class TextLength:
    """``Annotated[str, TextLength(1, 1024)]``: a string of ``min_length`` to ``max_length`` characters,
    counted in Python. pydantic's own length constraints refuse a string holding an unpaired UTF-16 surrogate,
    which is stored like any other text; this gives the same error types and the same schema."""

    min_length: int
    max_length: int

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["maxLength"] = self.max_length
        if self.min_length:
            json_schema["minLength"] = self.min_length
        return json_schema

    def _check(self, value: str) -> str:
        if len(value) < self.min_length:
            raise PydanticCustomError(
                "string_too_short",
                "String should have at least {min_length} characters",
                {"min_length": self.min_length},
            )
        if len(value) > self.max_length:
            message = "String should have at most {max_length} characters"
            raise PydanticCustomError("string_too_long", message, {"max_length": self.max_length})
        return value
