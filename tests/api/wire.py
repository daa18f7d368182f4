"""Wire-format builders for HTTP tests: request bodies that read like the domain."""

from typing import Any

import httpx


def user(text: str, id: str | None = None, **metadata: Any) -> dict[str, Any]:
    return _message("user", text, id, metadata)


def assistant(content: str | list[dict[str, Any]], id: str | None = None, **metadata: Any) -> dict[str, Any]:
    return _message("assistant", content, id, metadata)


def tool_call(call_id: str, name: str, id: str | None = None, **arguments: Any) -> dict[str, Any]:
    part = {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": arguments}
    return _message("assistant", [part], id, {})


def tool_result(call_id: str, name: str, output: str, id: str | None = None) -> dict[str, Any]:
    part = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": {"type": "text", "value": output}}
    return _message("tool", [part], id, {})


def _message(role: str, content: Any, id: str | None, metadata: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": content}
    if id is not None:
        body["id"] = id
    if metadata:
        body["metadata"] = metadata
    return body


async def new_session(client: httpx.AsyncClient, session_id: str = "s1", **fields: Any) -> str:
    response = await client.post("/sessions", json={"id": session_id, **fields})
    assert response.status_code == 201, response.text
    return session_id


async def append(client: httpx.AsyncClient, session_id: str, *messages: dict[str, Any]) -> httpx.Response:
    return await client.post(f"/sessions/{session_id}/messages", json={"messages": list(messages)})


async def stored_count(client: httpx.AsyncClient, session_id: str) -> int:
    response = await client.get(f"/sessions/{session_id}")
    assert response.status_code == 200, response.text
    return response.json()["messageCount"]
