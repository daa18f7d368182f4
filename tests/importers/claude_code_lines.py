"""Claude Code transcript lines as the tool writes them, built from its documented record shape.

Each builder returns one record (a dict); ``jsonl`` joins records into the bytes of a transcript file.
Parents are explicit, as in the file, so a test can build a rewind (two children of one line) or the side
chains of parallel tool calls.

    jsonl(prompt("u1", None, "Fix the build"), answer("a1", "u1", "msg_1", text("Reading.")))
"""

import json
from typing import Any

SESSION = "0b9a4c1e-6f1d-4c55-9a57-2f3c7d1e9b10"
MODEL = "claude-sonnet-4-5-20250929"


def jsonl(*records: dict[str, Any]) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def _line(kind: str, uuid: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/shop",
        "sessionId": SESSION,
        "version": "2.0.42",
        "gitBranch": "main",
        "type": kind,
        "uuid": uuid,
        "timestamp": f"2026-03-01T10:00:{second:02d}.000Z",
        **fields,
    }


def prompt(
    uuid: str, parent: str | None, content: str | list[dict[str, Any]], second: int = 0, **flags: Any
) -> dict[str, Any]:
    return _line("user", uuid, parent, second, message={"role": "user", "content": content}, **flags)


def answer(
    uuid: str,
    parent: str | None,
    message_id: str,
    *blocks: dict[str, Any],
    second: int = 1,
    stop_reason: str | None = None,
    model: str = MODEL,
    output_tokens: int = 12,
    **flags: Any,
) -> dict[str, Any]:
    message = {
        "model": model,
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": list(blocks),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 3,
            "cache_creation_input_tokens": 1200,
            "cache_read_input_tokens": 5400,
            "output_tokens": output_tokens,
        },
    }
    return _line("assistant", uuid, parent, second, message=message, requestId=f"req_{message_id}", **flags)


def results(uuid: str, parent: str, *blocks: dict[str, Any], second: int = 2, **flags: Any) -> dict[str, Any]:
    return _line("user", uuid, parent, second, message={"role": "user", "content": list(blocks)}, **flags)


def system(uuid: str, parent: str | None, subtype: str | None, second: int = 3, **fields: Any) -> dict[str, Any]:
    extra = {"subtype": subtype} if subtype else {}
    return _line("system", uuid, parent, second, **{"isMeta": False, "level": "info", **extra, **fields})


def attachment(uuid: str, parent: str | None, body: dict[str, Any], second: int = 3) -> dict[str, Any]:
    return _line("attachment", uuid, parent, second, attachment=body)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str = "EqQBCkYIBxgCKkA-signature") -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool_use(call_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def tool_result(call_id: str, content: str | list[dict[str, Any]], *, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def image(data: str = "iVBORw0KGgo=", media_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
