"""Wire-format builders for HTTP tests: request bodies that read like the domain."""

import json
from typing import Any

import httpx


def as_json(body: Any) -> dict[str, Any]:
    """Keyword arguments sending ``body`` as JSON that may spell unpaired surrogates (``\\ud83d``): httpx's
    own ``json=`` writes UTF-8, which cannot hold one."""
    return {"content": json.dumps(body), "headers": {"content-type": "application/json"}}


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
    count: int = response.json()["messageCount"]
    return count


def runtime(kind: str, text: str, id: str | None = None, role: str = "system", **metadata: Any) -> dict[str, Any]:
    """A runtime record: compaction artifacts, reminders, handoffs, switch notes, branch summaries."""
    return _message(role, text, id, {"runtimeKind": kind, **metadata})


def boundary(id: str, through: str | None = None) -> dict[str, Any]:
    return runtime("compact_boundary", "compacted", id, **({"compactThroughMessageId": through} if through else {}))


def summary(boundary_id: str, text: str, id: str | None = None) -> dict[str, Any]:
    return runtime("compact_summary", text, id, summaryForBoundaryId=boundary_id)


def every_kind() -> list[dict[str, Any]]:
    """One message of each of the seventeen kinds, in an order a real session could have."""
    approval = {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c2"}
    approved = {"type": "tool-approval-response", "approvalId": "ap1", "approved": True}
    return [
        _message("system", "You are a careful engineer.", "k1", {}),
        user("Fix the failing test", id="k2"),
        assistant([{"type": "reasoning", "text": "The log first."}], id="k3", provider="anthropic", model="claude"),
        tool_call("c1", "read_file", id="k4", path="log.txt"),
        tool_result("c1", "read_file", "AssertionError in test_x", id="k5"),
        assistant([approval], id="k6"),
        _message("tool", [approved], "k7", {}),
        assistant("The assertion compares the wrong field.", id="k8"),
        boundary("k9", through="k4"),
        summary("k9", "The user asked to fix a failing test; the log shows an AssertionError.", id="k10"),
        runtime("runtime_reminder", "Run the tests before answering.", "k11"),
        runtime("handoff_summary", "Handing over: the fix is in progress.", "k12", role="user"),
        runtime("agent_switch_note", "Switched to the reviewer agent.", "k13"),
        runtime("model_switch_note", "Model changed to anthropic/claude-opus-4-5.", "k13m"),
        _message(
            "user",
            "pytest -q",
            "k14",
            {"runtimeKind": "bash_execution", "command": "pytest -q", "output": "1 failed", "exitCode": 1},
        ),
        _message("user", "Lint passed", "k15", {"runtimeKind": "custom", "customType": "lint", "display": True}),
        runtime("branch_summary", "An abandoned branch tried reverting the change.", "k16", role="user"),
        user("Go on", id="k17"),
    ]
