"""The view rules over HTTP: flags, summaries, switch markers and the soft limit, as a client sees them."""

import httpx

from tests.api.wire import append, new_session, tool_call, tool_result, user


async def model_view(client: httpx.AsyncClient, **params: str) -> dict[str, object]:
    response = await client.get("/sessions/s1/projection", params={"view": "model", **params})
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


async def test_a_soft_limit_of_zero_never_cuts_a_tool_result(client: httpx.AsyncClient) -> None:
    await new_session(client)
    long_output = "x" * 60_000
    await append(client, "s1", user("read"), tool_call("c1", "read", id="t1"), tool_result("c1", "read", long_output))
    cut = await model_view(client)
    assert long_output not in str(cut["messages"])
    whole = await model_view(client, toolResultSoftLimitChars="0")
    assert long_output in str(whole["messages"])
    assert whole["diagnostics"]["truncatedMessageIds"] == []  # type: ignore[index]
    chat = await client.post(
        "/chat",
        json={
            "sessionId": "s1",
            "provider": "openai",
            "model": "gpt-4.1",
            "projection": {"toolResultSoftLimitChars": 0},
        },
    )
    assert chat.status_code == 200, chat.text
    assert long_output in str(chat.json()["payload"]["messages"])
