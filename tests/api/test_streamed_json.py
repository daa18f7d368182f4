"""A large answer is written as a stream of pieces, its items encoded a run at a time: the pieces join into
the JSON of the whole object, whatever the items' sizes, and a text orjson refuses still reads back."""

import json
from typing import Any

import pytest

from app.api.responses import STREAM_PIECE_BYTES, streamed_json


async def written(before: dict[str, Any], items: list[Any], after: dict[str, Any]) -> list[bytes]:
    response = streamed_json(before, "messages", items, after, headers={})
    pieces: list[bytes] = []
    async for piece in response.body_iterator:
        assert not isinstance(piece, str), "streamed_json writes bytes"
        pieces.append(bytes(piece))
    return pieces


def message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


SIZES = [10, 300_000, 3, 3, 700_000, 1, 5_000, 2_000_000, 40, *[2_000] * 600, 1_000_000, *[10] * 50]
"""Characters of text a message: small and large in turn, then many alike (each é is two bytes in UTF-8)."""


@pytest.mark.parametrize("after", [{}, {"hasMore": False, "diagnostics": {"repairs": []}}])
@pytest.mark.parametrize("before", [{}, {"view": "model", "sessionId": "s1"}])
async def test_the_pieces_join_into_the_whole_objects_json(before: dict[str, Any], after: dict[str, Any]) -> None:
    items = [message(f"{index}:" + "é" * size) for index, size in enumerate(SIZES)]
    pieces = await written(before, items, after)
    assert json.loads(b"".join(pieces)) == {**before, "messages": items, **after}
    assert len(pieces) > 1, "pieces, not one body"


async def test_items_alike_are_written_about_a_piece_at_a_time() -> None:
    items = [message("é" * 2_000) for _ in range(3_000)]
    pieces = await written({}, items, {})
    assert json.loads(b"".join(pieces)) == {"messages": items}
    assert all(len(piece) < 2 * STREAM_PIECE_BYTES for piece in pieces), [len(piece) for piece in pieces]
    assert len(pieces) >= 12 * 1024 * 1024 // (2 * STREAM_PIECE_BYTES), len(pieces)


async def test_an_item_orjson_refuses_is_written_by_the_standard_library_with_its_run() -> None:
    items = [message("before"), message("cut emoji \ud83d"), message("after é")]
    pieces = await written({"view": "model"}, items, {})
    assert json.loads(b"".join(pieces)) == {"view": "model", "messages": items}


async def test_no_items_make_an_empty_array() -> None:
    assert json.loads(b"".join(await written({"view": "model"}, [], {"hasMore": False}))) == {
        "view": "model",
        "messages": [],
        "hasMore": False,
    }
