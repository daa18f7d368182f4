"""What counts as heavy work: a batch's weight sees its text wherever a part nests it."""

from typing import Any

import pytest

from app.services.heavy_work import OFF_LOOP_WEIGHT, content_weight

MEGABYTES = "x" * 3_000_000


def json_result(value: Any) -> dict[str, Any]:
    return {"type": "tool-result", "toolCallId": "c1", "toolName": "read", "output": {"type": "json", "value": value}}


@pytest.mark.parametrize(
    "part",
    [
        {"type": "text", "text": MEGABYTES},
        {"type": "tool-result", "toolCallId": "c1", "toolName": "read", "output": {"type": "text", "value": MEGABYTES}},
        json_result({"file": {"contents": MEGABYTES}}),
        json_result([[MEGABYTES]]),
    ],
    ids=["text", "text output", "nested json output", "nested list output"],
)
def test_megabytes_of_text_are_heavy_however_deep_a_part_holds_them(part: dict[str, Any]) -> None:
    assert content_weight([[part]]) >= OFF_LOOP_WEIGHT
    assert content_weight([MEGABYTES]) >= OFF_LOOP_WEIGHT


def test_a_few_small_parts_are_light() -> None:
    assert content_weight([[{"type": "text", "text": "hi"}, json_result({"a": [1, "two"]})], "hello"]) < 10
