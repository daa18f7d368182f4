"""The session the viewer tests open (and the README's screenshot shows), written through the public API.

It holds one of each thing the viewer marks: a result pruned to a stub, a result cut to the soft limit, a note
kept out of the model's context, a reminder injected into a user turn, and an answer with provider usage.
"""

from typing import Any

import httpx

from tests.api.wire import assistant, runtime, tool_call, tool_result, user

SESSION_ID = "fix-the-build"
TITLE = "Fix the failing build"
HIDDEN_ID = "m4"
HIDDEN_REASON = "eligibleForModelContext is false"
STUBBED_ID = "m3"
CUT_ID = "m6"
ANSWER_ID = "m7"
CUT_OUTPUT_CHARS = 60_000
"""Past the model view's default soft limit for a tool result (50,000 characters), so it is cut."""


def build_log() -> str:
    return "\n".join(f"[{n:04}] compiling module {n}: ok" for n in range(1, 40)) + "\nerror: build failed"


def compiler_output() -> str:
    line = "src/app.ts(42,18): error TS1005: ';' expected.\n"
    return (line * (CUT_OUTPUT_CHARS // len(line) + 1))[:CUT_OUTPUT_CHARS]


def messages() -> list[dict[str, Any]]:
    return [
        user("The CI build fails since this morning. Can you find out why?", id="m1"),
        tool_call("call_log", "read_file", id="m2", path="build.log"),
        tool_result("call_log", "read_file", build_log(), id=STUBBED_ID),
        user("(note to self: ask Sam about the release date)", id=HIDDEN_ID, eligibleForModelContext=False),
        tool_call("call_tsc", "bash", id="m5", command="npx tsc --noEmit"),
        tool_result("call_tsc", "bash", compiler_output(), id=CUT_ID),
        assistant(
            [{"type": "text", "text": "The build fails on a missing semicolon in src/app.ts, line 42."}],
            id=ANSWER_ID,
            provider="anthropic",
            model="claude-sonnet-4-5",
            finishReason="stop",
            usage={"inputTokens": 18_400, "outputTokens": 60, "cacheReadTokens": 0, "cacheWriteTokens": 0},
        ),
        runtime("runtime_reminder", "The user prefers one small commit per fix.", "m8"),
        user("Thanks! Please fix it.", id="m9"),
    ]


def seed_fix_the_build(client: httpx.Client) -> str:
    """Creates the session (auth off, or a runtime key in ``client``) and prunes the build log's result."""
    created = client.post(
        "/sessions",
        json={"id": SESSION_ID, "title": TITLE, "model": "anthropic/claude-sonnet-4-5", "contextWindowTokens": 200_000},
    )
    assert created.status_code == 201, created.text
    appended = client.post(f"/sessions/{SESSION_ID}/messages", json={"messages": messages()})
    assert appended.status_code == 201, appended.text
    pruned = client.patch(
        f"/sessions/{SESSION_ID}/messages/{STUBBED_ID}", json={"metadata": {"compactedAt": "2026-04-08T10:00:00Z"}}
    )
    assert pruned.status_code == 200, pruned.text
    return SESSION_ID
