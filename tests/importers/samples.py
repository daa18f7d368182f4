"""One small but complete session per format, written from each tool's documented schema (never copied
from a real session): what the format-wide tests import, check and grow line by line.

Each holds what its importer must handle: Claude Code's split responses, parallel results, an error, signed
thinking, an image, a compaction, hook and API-error lines, a sidechain and a rewind; pi's tree with a
branch, a compaction keeping a tail, a bash execution, an extension message and an image in a tool result;
opencode's multi-step answer with tool states, a compaction and its summary; the three request bodies.
"""

import json
from typing import Any

from tests.importers.claude_code_lines import (
    answer,
    attachment,
    image,
    jsonl,
    prompt,
    results,
    system,
    text,
    thinking,
    tool_result,
    tool_use,
)


def claude_code() -> bytes:
    return jsonl(
        {"type": "summary", "summary": "Another conversation", "leafUuid": "elsewhere"},
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}, "isSnapshotUpdate": False},
        prompt("u1", None, "The checkout test fails, can you fix it?"),
        attachment("t1", "u1", {"type": "hook_additional_context", "content": ["Use pnpm."]}),
        answer("a1", "t1", "msg_01", thinking("The test runner first.")),
        answer("a2", "a1", "msg_01", text("Running the tests.")),
        answer("a3", "a2", "msg_01", tool_use("toolu_1", "Bash", command="pnpm test")),
        answer("a4", "a3", "msg_01", tool_use("toolu_2", "Read", file_path="checkout.ts")),
        results("r1", "a3", tool_result("toolu_1", "1 failed", is_error=True), toolUseResult={"exitCode": 1}),
        results("r2", "a4", tool_result("toolu_2", [{"type": "text", "text": "export const total = 1"}, image()])),
        system("h1", "r2", None, content="PostToolUse:Read [hook] completed successfully", toolUseID="toolu_2"),
        answer("a5", "h1", "msg_02", text("Fixed the rounding."), stop_reason="end_turn"),
        system("s1", "a5", "stop_hook_summary", hookInfos=[{"command": "notify"}]),
        prompt("u2", "s1", [text("Here is the screen"), image()], second=10),
        system("e1", "u2", "api_error", level="error", cause={"code": "ECONNRESET"}, retryAttempt=1, maxRetries=10),
        answer("a6", "e1", "b7c1", text("API Error: Connection reset"), model="<synthetic>", isApiErrorMessage=True),
        prompt("u3", "a6", "Try again", second=20),
        answer("a7", "u3", "msg_03", text("I will look at the rounding again.")),
        prompt("u4", "a6", "Try again, and run the linter too", second=30),
        answer("a8", "u4", "msg_04", tool_use("toolu_3", "Bash", command="pnpm lint")),
        results("r3", "a8", tool_result("toolu_3", "clean")),
        {**prompt("x1", None, "Warmup"), "isSidechain": True},
        system("c1", None, "compact_boundary", logicalParentUuid="r3", compactMetadata={"trigger": "auto"}),
        prompt(
            "u5", "c1", "This session is being continued. Summary: fixed rounding, lint clean.", isCompactSummary=True
        ),
        answer("a9", "u5", "msg_05", text("Both are done."), stop_reason="end_turn"),
        system("s2", "a9", "turn_duration", durationMs=1200),
        {"type": "ai-title", "aiTitle": "Fix the checkout test", "sessionId": "x"},
    )


def pi() -> bytes:
    def entry(kind: str, key: str, parent: str | None, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "id": key, "parentId": parent, "timestamp": "2026-03-02T09:00:00.000Z", **fields}

    def message(key: str, parent: str | None, **fields: Any) -> dict[str, Any]:
        return entry("message", key, parent, message=fields)

    assistant = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-opus-4-5"}
    usage = {"input": 10, "output": 20, "cacheRead": 300, "cacheWrite": 40, "totalTokens": 370}
    records = [
        {"type": "session", "version": 3, "id": "9f0c2a7e-pi", "timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/w"},
        message("a0000001", None, role="user", content="List the failing tests", timestamp=1772442000000),
        message(
            "a0000002",
            "a0000001",
            role="assistant",
            content=[
                {"type": "thinking", "thinking": "Run them.", "thinkingSignature": "sig-pi"},
                {"type": "toolCall", "id": "toolu_p1", "name": "bash", "arguments": {"command": "npm test"}},
            ],
            usage=usage,
            stopReason="toolUse",
            **assistant,
        ),
        message(
            "a0000003",
            "a0000002",
            role="toolResult",
            toolCallId="toolu_p1",
            toolName="bash",
            content=[
                {"type": "text", "text": "2 failing"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            ],
            isError=False,
            details={"exitCode": 1},
        ),
        message(
            "a0000004",
            "a0000003",
            role="assistant",
            content=[{"type": "text", "text": "Two fail."}],
            stopReason="stop",
            **assistant,
        ),
        message("b0000001", "a0000004", role="user", content="Fix the first"),
        message(
            "b0000002",
            "b0000001",
            role="assistant",
            content=[{"type": "text", "text": "Fixing."}],
            stopReason="stop",
            **assistant,
        ),
        entry("branch_summary", "c0000001", "a0000004", fromId="b0000002", summary="Tried fixing the first test."),
        entry("thinking_level_change", "c0000002", "c0000001", thinkingLevel="high"),
        message(
            "c0000003",
            "c0000002",
            role="bashExecution",
            command="git status",
            output="clean",
            exitCode=0,
            cancelled=False,
            truncated=False,
        ),
        entry("custom_message", "c0000004", "c0000003", customType="todo", content="1. fix tests", display=True),
        entry("custom", "c0000005", "c0000004", customType="todo-state", data={"open": 1}),
        message("c0000006", "c0000005", role="user", content=[{"type": "text", "text": "Fix both"}]),
        message(
            "c0000007",
            "c0000006",
            role="assistant",
            content=[{"type": "text", "text": "Done."}],
            stopReason="stop",
            **assistant,
        ),
        entry(
            "compaction",
            "c0000008",
            "c0000007",
            summary="Fixed both tests.",
            firstKeptEntryId="c0000006",
            tokensBefore=90000,
        ),
        entry("model_change", "c0000009", "c0000008", provider="openai", modelId="gpt-5"),
        entry("session_info", "c0000010", "c0000009", name="Failing tests"),
        entry("label", "c0000011", "c0000010", targetId="c0000007", label="fixed"),
        message("c0000012", "c0000011", role="user", content="Anything else?"),
    ]
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def opencode() -> bytes:
    def part(key: str, kind: str, **fields: Any) -> dict[str, Any]:
        return {"id": key, "sessionID": "ses_1", "messageID": "m", "type": kind, **fields}

    def user(key: str, created: int, *parts: dict[str, Any]) -> dict[str, Any]:
        info = {"id": key, "sessionID": "ses_1", "role": "user", "time": {"created": created}, "agent": "build"}
        info["model"] = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
        return {"info": info, "parts": list(parts)}

    def assistant(key: str, parent: str, created: int, *parts: dict[str, Any], **info: Any) -> dict[str, Any]:
        base = {
            "id": key,
            "sessionID": "ses_1",
            "role": "assistant",
            "time": {"created": created, "completed": created + 5000},
            "parentID": parent,
            "providerID": "anthropic",
            "modelID": "claude-sonnet-4-5",
            "mode": "build",
            "agent": "build",
            "path": {"cwd": "/w", "root": "/w"},
            "cost": 0.01,
            "tokens": {"input": 10, "output": 20, "reasoning": 0, "cache": {"read": 100, "write": 5}},
        }
        return {"info": {**base, **info}, "parts": list(parts)}

    tokens = {"input": 10, "output": 20, "reasoning": 0, "cache": {"read": 100, "write": 5}}
    signed = {"anthropic": {"signature": "sig-oc"}}
    done = {
        "status": "completed",
        "input": {"filePath": "a.ts"},
        "output": "export {}",
        "title": "a.ts",
        "metadata": {},
    }
    done["time"] = {"start": 1, "end": 2, "compacted": 1772442600000}
    export = {
        "info": {
            "id": "ses_1",
            "projectID": "p1",
            "directory": "/w",
            "title": "Tidy the exports",
            "version": "1.2.5",
            "time": {"created": 1772442000000, "updated": 1772442900000},
        },
        "messages": [
            user(
                "msg_u1",
                1772442000000,
                part("prt_u1", "text", text="Tidy the exports in a.ts"),
                part("prt_u2", "file", mime="text/plain", url="file:///w/a.ts", filename="a.ts"),
                part("prt_u3", "text", text="<file a.ts contents>", synthetic=True),
                part("prt_u4", "file", mime="image/png", url="data:image/png;base64,iVBORw0KGgo=", filename="s.png"),
            ),
            assistant(
                "msg_a1",
                "msg_u1",
                1772442001000,
                part("prt_a1", "step-start"),
                part("prt_a2", "reasoning", text="Read it first.", metadata=signed, time={"start": 1}),
                part("prt_a3", "tool", callID="toolu_o1", tool="read", state=done),
                part(
                    "prt_a4",
                    "tool",
                    callID="toolu_o2",
                    tool="bash",
                    state={
                        "status": "error",
                        "input": {"command": "x"},
                        "error": "boom",
                        "time": {"start": 1, "end": 2},
                    },
                ),
                part("prt_a5", "step-finish", reason="tool-calls", cost=0.01, tokens=tokens),
                part("prt_a6", "step-start"),
                part("prt_a7", "text", text="Tidied."),
                part("prt_a8", "patch", hash="abc", files=["a.ts"]),
                part("prt_a9", "step-finish", reason="stop", cost=0.01, tokens=tokens),
                finish="stop",
            ),
            user("msg_u2", 1772442100000, part("prt_c1", "compaction", auto=True)),
            assistant(
                "msg_a2",
                "msg_u2",
                1772442101000,
                part("prt_s1", "text", text="Summary: tidied a.ts exports."),
                summary=True,
                finish="stop",
                mode="compaction",
            ),
            user("msg_u3", 1772442200000, part("prt_u5", "text", text="Now b.ts")),
            assistant(
                "msg_a3",
                "msg_u3",
                1772442201000,
                part(
                    "prt_b1",
                    "tool",
                    callID="toolu_o3",
                    tool="read",
                    state={"status": "running", "input": {}, "time": {"start": 1}},
                ),
                error={"name": "MessageAbortedError", "data": {"message": "aborted"}},
            ),
        ],
    }
    return json.dumps(export, indent=2).encode()


def openai_chat() -> bytes:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Weather in Oslo?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "4 C, rain"},
            {"role": "assistant", "content": "4 C and rain."},
        ],
    }
    return json.dumps(body).encode()


def anthropic_messages() -> bytes:
    body = {
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Use the tool.", "signature": "sig-am"},
                    {"type": "tool_use", "id": "toolu_a1", "name": "weather", "input": {"city": "Oslo"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a1", "content": "4 C, rain"},
                    {"type": "text", "text": "And tomorrow?"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Sun tomorrow."}]},
        ],
    }
    return json.dumps(body).encode()


def ai_sdk() -> bytes:
    body = {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "reasoning",
                        "text": "Use the tool.",
                        "providerOptions": {"anthropic": {"signature": "sig-ai"}},
                    },
                    {"type": "tool-call", "toolCallId": "call_s1", "toolName": "weather", "input": {"city": "Oslo"}},
                ],
            },
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "call_s1",
                        "toolName": "weather",
                        "output": {"type": "text", "value": "4 C"},
                    }
                ],
            },
            {"role": "assistant", "content": "4 C."},
        ],
    }
    return json.dumps(body).encode()


def projector() -> bytes:
    """An archive as ``GET /sessions/{id}/archive`` writes it: the session, its run, its messages."""
    at = "2026-12-01T10:00:00+00:00"
    lines: list[dict[str, object]] = [
        {
            "type": "session",
            "format": "projector-archive",
            "version": 1,
            "id": "s-archived",
            "title": "Weather",
            "metadata": {"team": "x"},
            "model": "anthropic/claude-sonnet-4-5",
            "contextWindowTokens": 200000,
            "lastSeq": 4,
            "messageCount": 4,
            "createdAt": at,
            "updatedAt": at,
        },
        {
            "type": "run",
            "id": "run-1",
            "sessionId": "s-archived",
            "agent": "build",
            "model": None,
            "system": "Be brief.",
            "tools": None,
            "variant": None,
            "format": None,
            "usage": {"outputTokens": 9},
            "result": None,
            "metadata": {},
            "createdAt": at,
            "updatedAt": at,
        },
    ]
    messages = [
        ("m1", "user", "Weather in Oslo?", {}),
        (
            "m2",
            "assistant",
            [{"type": "tool-call", "toolCallId": "call_p1", "toolName": "weather", "input": {"city": "Oslo"}}],
            {},
        ),
        (
            "m3",
            "tool",
            [
                {
                    "type": "tool-result",
                    "toolCallId": "call_p1",
                    "toolName": "weather",
                    "output": {"type": "text", "value": "4 C"},
                }
            ],
            {},
        ),
        ("m4", "assistant", "4 C.", {"usage": {"inputTokens": 20, "outputTokens": 3}}),
    ]
    for seq, (message_id, role, content, metadata) in enumerate(messages, start=1):
        lines.append(
            {
                "type": "message",
                "id": message_id,
                "sessionId": "s-archived",
                "seq": seq,
                "role": role,
                "kind": "",
                "content": content,
                "metadata": metadata,
                "runId": "run-1",
                "createdAt": at,
                "tokenEstimate": 1,
            }
        )
    lines.append({"type": "end", "runs": 1, "messages": len(messages)})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


SAMPLES = {
    "claude-code": claude_code,
    "pi": pi,
    "opencode": opencode,
    "openai-chat": openai_chat,
    "anthropic-messages": anthropic_messages,
    "ai-sdk": ai_sdk,
    "projector": projector,
}
