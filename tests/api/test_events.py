"""``GET /sessions/{id}/events`` over real HTTP: each append as a message event with its seq as id, the other
changes as their own events, resuming with Last-Event-ID or ``after``, the same walls as reads, a cap on
streams, heartbeats, a slow consumer that resyncs instead of growing, and a lost LISTEN connection replaced."""

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from fastapi import FastAPI

from app.api.routes.events import resume_seq
from app.errors import BadRequest
from app.importers.registry import parse_import
from app.main import create_app
from app.services.events import (
    EventHub,
    MessageAmended,
    MessageAppended,
    Resynced,
    SessionChanged,
    StreamOptions,
    Subscription,
    follow_session,
)
from app.services.messages import response_budget
from app.settings import Settings
from app.store.events import Notice, NoticeKind
from app.store.messages import MessageRepository
from app.store.records import MessageRecord
from tests.api.sse import open_stream
from tests.api.wire import (
    append,
    as_json,
    assistant,
    boundary,
    new_session,
    summary,
    tool_call,
    tool_result,
    user,
)
from tests.conftest import settings_for_tests
from tests.database import plain_dsn
from tests.importers import samples
from tests.trust.keys import API_KEYS, OTHER_TENANT, READER, RUNTIME
from tests.trust.live_server import forget_everything, serving


@pytest.fixture
def served(database_url: str) -> Iterator[Any]:
    """``served(**settings)``: the app served over HTTP on a loopback port; its app and base URL."""
    apps: list[Any] = []

    def start(**overrides: object) -> tuple[FastAPI, str]:
        app = create_app(settings_for_tests(**overrides), database_url=database_url)
        server = serving(app)
        url = server.__enter__()
        apps.append(server)
        return app, url

    yield start
    for server in reversed(apps):
        server.__exit__(None, None, None)
    forget_everything(database_url)


@pytest.fixture
async def http(served: Any) -> AsyncIterator[httpx.AsyncClient]:
    _, url = served()
    async with httpx.AsyncClient(base_url=url, timeout=20) as client:
        yield client


async def test_an_append_arrives_as_a_message_event_with_the_listing_body(http: httpx.AsyncClient) -> None:
    await new_session(http, "live")
    async with open_stream(http, "live") as stream:
        await append(http, "live", user("Are you there?", id="m1"), assistant("Yes.", id="m2"))
        events = await stream.messages(2)

    listed = (await http.get("/sessions/live/messages")).json()["messages"]
    assert [event.id for event in events] == ["1", "2"]
    assert [event.json() for event in events] == listed


async def test_a_message_holding_a_nul_and_an_unpaired_surrogate_arrives_as_it_was_sent(
    http: httpx.AsyncClient,
) -> None:
    await new_session(http, "live")
    sent = {"id": "m1", "role": "user", "content": "cat a.bin: \x00 and half \ud83d", "metadata": {"k\x00": "\udc00"}}
    async with open_stream(http, "live") as stream:
        await http.post("/sessions/live/messages", **as_json({"messages": [sent]}))
        [event] = await stream.messages(1)
    received = json.loads(event.data)  # the standard library keeps the unpaired surrogate
    assert (received["content"], received["metadata"]) == (sent["content"], sent["metadata"])


async def test_last_event_id_resumes_after_that_seq_and_wins_over_after(http: httpx.AsyncClient) -> None:
    await new_session(http, "live")
    await append(http, "live", *[user(f"message {n}", id=f"m{n}") for n in range(1, 6)])

    async with open_stream(http, "live", last_event_id=2, after=4) as stream:
        assert [event.id for event in await stream.messages(3)] == ["3", "4", "5"]
        await append(http, "live", user("six", id="m6"))
        assert [event.id for event in await stream.messages(1)] == ["6"]


async def test_after_takes_a_seq_or_a_listing_cursor_and_without_either_the_stream_starts_now(
    http: httpx.AsyncClient,
) -> None:
    await new_session(http, "live")
    await append(http, "live", *[user(f"message {n}", id=f"m{n}") for n in range(1, 4)])
    cursor = (await http.get("/sessions/live/messages", params={"limit": 1})).json()["nextCursor"]

    async with open_stream(http, "live", after=cursor) as stream:
        assert [event.id for event in await stream.messages(2)] == ["2", "3"]
    async with open_stream(http, "live", after=0) as stream:
        assert [event.id for event in await stream.messages(3)] == ["1", "2", "3"]
    async with open_stream(http, "live") as stream:
        await append(http, "live", user("four", id="m4"))
        assert [event.id for event in await stream.messages(1)] == ["4"]


async def test_amendments_compactions_and_prunes_arrive_as_their_own_events(http: httpx.AsyncClient) -> None:
    await new_session(http, "live")
    history = [user("Read the log", id="m1")]
    for n in range(3):
        history += [
            tool_call(f"c{n}", "read_file", id=f"call{n}", path=f"f{n}"),
            tool_result(f"c{n}", "read_file", "x" * 40_000, id=f"out{n}"),
        ]
    await append(http, "live", *history, user("Thanks", id="m9"))

    async with open_stream(http, "live") as stream:
        assert (
            await http.patch("/sessions/live/messages/m1", json={"metadata": {"tags": ["first"]}})
        ).status_code == 200
        amended = await stream.next()
        assert amended.type == "amended" and amended.id is None
        assert amended.json()["id"] == "m1" and amended.json()["metadata"] == {"tags": ["first"]}

        pruned = await http.post(
            "/sessions/live/prune", json={"protectUserTurns": 0, "protectToolTokens": 0, "minimumSavingsTokens": 0}
        )
        assert pruned.status_code == 200 and pruned.json()["markedMessageIds"]
        prune = await stream.next()
        assert prune.type == "prune"
        assert prune.json()["count"] == len(pruned.json()["markedMessageIds"])

        compacted = await http.post(
            "/sessions/live/compactions", json={"summary": "Read three files.", "throughMessageId": "out2"}
        )
        assert compacted.status_code == 201, compacted.text
        boundary, summary, compaction = await stream.next(), await stream.next(), await stream.next()
    assert (boundary.type, summary.type) == ("message", "message")
    assert compaction.type == "compaction"
    assert compaction.json() == {
        "sessionId": "live",
        "boundaryId": boundary.json()["id"],
        "summaryId": summary.json()["id"],
        "boundarySeq": int(boundary.id or 0),
        "summarySeq": int(summary.id or 0),
    }


async def test_an_import_arrives_as_message_events_then_the_compaction_it_recorded(http: httpx.AsyncClient) -> None:
    data = samples.claude_code()
    [imported] = parse_import("claude-code", data).sessions
    await new_session(http, imported.id)
    async with open_stream(http, imported.id) as stream:
        response = await http.post(
            "/sessions/import",
            params={"format": "claude-code"},
            content=data,
            headers={"content-type": "application/x-ndjson"},
        )
        assert response.status_code == 201, response.text
        events = await stream.messages(len(imported.messages))
        compaction = await stream.next()
    assert [event.json()["id"] for event in events] == [message.id for message in imported.messages]
    assert [event.id for event in events] == [str(seq) for seq in range(1, len(imported.messages) + 1)]
    seqs = {event.json()["id"]: int(event.id or 0) for event in events}
    assert compaction.type == "compaction"
    assert compaction.json() == {
        "sessionId": imported.id,
        "boundaryId": "c1",
        "summaryId": "u5",
        "boundarySeq": seqs["c1"],
        "summarySeq": seqs["u5"],
    }


async def test_a_compaction_a_runtime_appends_itself_arrives_as_a_compaction_event(http: httpx.AsyncClient) -> None:
    await new_session(http, "live")
    await append(http, "live", user("Read the log", id="m1"), assistant("Read.", id="m2"))
    async with open_stream(http, "live") as stream:
        await append(http, "live", boundary("b1", through="m2"), summary("b1", "Read the log.", id="s1"))
        events = await stream.messages(2)
        compaction = await stream.next()
    assert [event.id for event in events] == ["3", "4"]
    assert (compaction.type, compaction.json()) == (
        "compaction",
        {"sessionId": "live", "boundaryId": "b1", "summaryId": "s1", "boundarySeq": 3, "summarySeq": 4},
    )


async def test_deleting_the_session_ends_its_streams_with_a_deleted_event(http: httpx.AsyncClient) -> None:
    await new_session(http, "doomed")
    await append(http, "doomed", user("one", id="m1"))
    async with open_stream(http, "doomed", after=0) as stream:
        assert [event.id for event in await stream.messages(1)] == ["1"]
        assert (await http.delete("/sessions/doomed")).status_code == 204
        deleted = await stream.next()
        assert (deleted.type, deleted.id, deleted.json()) == ("deleted", None, {"sessionId": "doomed"})
        assert await stream.ended()


async def test_a_stream_never_reads_the_session_created_again_under_its_id(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """The stream's own hub never hears the deletion: the next read finds another session under the id."""
    await new_session(client, "again")
    await append(client, "again", *[user(f"old {n}", id=f"old{n}") for n in range(1, 4)])
    hub = EventHub(max_streams=1, queue_size=3)
    options = StreamOptions(page_size=50, budget=response_budget(Settings()), heartbeat_seconds=5)
    events = await follow_session(app.state.database, hub, "default", "again", after_seq=None, options=options)

    assert (await client.delete("/sessions/again")).status_code == 204
    await new_session(client, "again")
    await append(client, "again", *[user(f"new {n}", id=f"new{n}") for n in range(1, 6)])
    hub.deliver(Notice("default", "again", NoticeKind.MESSAGE, 1, 5))

    assert await anext(events) == SessionChanged(NoticeKind.DELETED, 0, 0)
    with pytest.raises(StopAsyncIteration):
        await anext(events)
    assert hub.open_streams == 0


async def test_a_resume_point_past_the_last_seq_resyncs_and_sends_the_session_from_its_first_message(
    http: httpx.AsyncClient,
) -> None:
    await new_session(http, "reborn")
    await append(http, "reborn", *[user(f"old {n}", id=f"old{n}") for n in range(1, 6)])
    assert (await http.delete("/sessions/reborn")).status_code == 204
    await new_session(http, "reborn")
    await append(http, "reborn", user("new 1", id="new1"), user("new 2", id="new2"))

    async with open_stream(http, "reborn", last_event_id=5) as stream:
        resync = await stream.next()
        assert resync.type == "resync" and "deleted" in resync.json()["reason"]
        events = await stream.messages(2)
    assert [(event.id, event.json()["id"]) for event in events] == [("1", "new1"), ("2", "new2")]


async def test_an_idle_stream_sends_heartbeats(served: Any) -> None:
    _, url = served(events_heartbeat_seconds=0.2)
    async with httpx.AsyncClient(base_url=url) as client:
        await new_session(client, "quiet")
        async with open_stream(client, "quiet") as stream:
            with pytest.raises(TimeoutError):
                await stream.next(within=1.0)
            assert stream.comments.count("heartbeat") >= 3


async def test_streams_past_the_cap_are_refused_with_503_and_a_closed_one_frees_its_place(served: Any) -> None:
    app, url = served(events_max_streams=1)
    async with httpx.AsyncClient(base_url=url) as client:
        await new_session(client, "capped")
        async with open_stream(client, "capped"):
            refused = await client.get("/sessions/capped/events")
            assert refused.status_code == 503
            assert refused.headers["content-type"] == "application/problem+json"
            assert refused.headers["retry-after"] == "1"
            assert refused.json()["type"].endswith("/too-many-streams")
        for _ in range(50):
            if app.state.events.open_streams == 0:
                break
            await asyncio.sleep(0.1)
        async with open_stream(client, "capped") as stream:
            await append(client, "capped", user("room again", id="m1"))
            assert [event.id for event in await stream.messages(1)] == ["1"]


async def test_the_same_walls_as_reads_key_role_tenant_and_a_bad_last_event_id(served: Any) -> None:
    _, url = served(api_keys=orjson.dumps(API_KEYS).decode())
    async with httpx.AsyncClient(base_url=url, headers={"authorization": f"Bearer {RUNTIME}"}) as acme:
        await new_session(acme, "walled")
    async with httpx.AsyncClient(base_url=url) as anonymous:
        missing_key = await anonymous.get("/sessions/walled/events")
        assert missing_key.status_code == 401
    async with httpx.AsyncClient(base_url=url, headers={"authorization": f"Bearer {OTHER_TENANT}"}) as globex:
        assert (await globex.get("/sessions/walled/events")).status_code == 404
    async with httpx.AsyncClient(base_url=url, headers={"authorization": f"Bearer {READER}"}) as reader:
        bad = await reader.get("/sessions/walled/events", headers={"last-event-id": "seven"})
        assert bad.status_code == 400 and bad.json()["field"] == "Last-Event-ID"
        async with open_stream(reader, "walled", after=0) as stream:
            async with httpx.AsyncClient(base_url=url, headers={"authorization": f"Bearer {RUNTIME}"}) as acme:
                await append(acme, "walled", user("for readers too", id="m1"))
            assert [event.id for event in await stream.messages(1)] == ["1"]


async def test_another_tenants_changes_to_a_session_of_the_same_id_never_reach_the_stream(served: Any) -> None:
    """Ids are per tenant: what acme does to its ``shared`` (appends, an amendment, a compaction, deleting it and
    creating it again) is no event of globex's ``shared``, which a globex reader follows, resumed by seq."""
    _, url = served(api_keys=orjson.dumps(API_KEYS).decode())
    acme = httpx.AsyncClient(base_url=url, headers={"authorization": f"Bearer {RUNTIME}"}, timeout=20)
    globex = httpx.AsyncClient(base_url=url, headers={"authorization": f"Bearer {OTHER_TENANT}"}, timeout=20)
    async with acme, globex:
        for client, tenant in ((acme, "acme"), (globex, "globex")):
            await new_session(client, "shared")
            await append(client, "shared", user(f"{tenant} opens", id="m1"), assistant(f"{tenant} answers", id="m2"))
        async with open_stream(globex, "shared", last_event_id=1) as stream:
            assert [event.json()["content"] for event in await stream.messages(1)] == ["globex answers"]
            await append(acme, "shared", user("acme again", id="m3"))
            assert (await acme.patch("/sessions/shared/messages/m1", json={"metadata": {"x": 1}})).status_code == 200
            compacted = await acme.post("/sessions/shared/compactions", json={"summary": "acme's summary"})
            assert compacted.status_code == 201, compacted.text
            assert (await acme.delete("/sessions/shared")).status_code == 204
            await new_session(acme, "shared")
            await append(acme, "shared", user("acme anew", id="m1"))
            await append(globex, "shared", user("globex goes on", id="m3"))
            assert (await globex.patch("/sessions/shared/messages/m3", json={"metadata": {"y": 2}})).status_code == 200

            received = [await stream.next(), await stream.next()]

    assert [(event.type, event.id, event.json()["content"]) for event in received] == [
        ("message", "3", "globex goes on"),
        ("amended", None, "globex goes on"),
    ]


async def test_a_stream_that_falls_behind_resyncs_from_the_database_instead_of_queueing(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """Ten amendments reach a stream that is not being read and queues at most three: they are dropped, and
    when it is read again the stream reads the messages from the database and says ``resync``."""
    await new_session(client, "slow")
    await append(client, "slow", user("one", id="m1"))
    hub = EventHub(max_streams=1, queue_size=3)
    options = StreamOptions(page_size=50, budget=response_budget(Settings()), heartbeat_seconds=5)
    events = await follow_session(app.state.database, hub, "default", "slow", after_seq=0, options=options)
    assert await anext(events) == MessageAppended(await message_record(app, "m1"))

    for _ in range(10):
        hub.deliver(Notice("default", "slow", NoticeKind.AMENDED, 1, 1, {"messageId": "m1"}))
    await append(client, "slow", user("two", id="m2"))
    hub.deliver(Notice("default", "slow", NoticeKind.MESSAGE, 2, 2))

    assert await anext(events) == MessageAppended(await message_record(app, "m2"))
    kept = []
    while not isinstance(event := await anext(events), Resynced):
        kept.append(event)
    assert len(kept) <= 3
    assert all(isinstance(event, MessageAmended) for event in kept)
    await events.aclose()
    assert hub.open_streams == 0


@pytest.mark.parametrize(
    ("last_event_id", "after", "field"),
    [
        ("9" * 5_000, None, "Last-Event-ID"),
        (str(2**63), None, "Last-Event-ID"),
        ("99999999999999999999", None, "Last-Event-ID"),
        (None, "9" * 5_000, "after"),
        (None, str(2**63), "after"),
    ],
)
def test_a_resume_point_past_any_seq_is_a_400_naming_it(
    last_event_id: str | None, after: str | None, field: str
) -> None:
    with pytest.raises(BadRequest) as refused:
        resume_seq("s1", last_event_id, after)
    assert refused.value.extensions["field"] == field


def test_the_largest_seq_is_a_resume_point() -> None:
    assert resume_seq("s1", str(2**63 - 1), None) == 2**63 - 1
    assert resume_seq("s1", None, "007") == 7


def test_a_subscription_holds_at_most_its_queue_and_folds_message_notices_into_one_seq() -> None:
    subscription = Subscription("t", "s", queue_size=3)
    for seq in range(1, 1_001):
        subscription.offer(Notice("t", "s", NoticeKind.MESSAGE, seq, seq))
        subscription.offer(Notice("t", "s", NoticeKind.AMENDED, seq, seq, {"messageId": f"m{seq}"}))
        assert len(subscription.changes) <= 3

    announced, changes, reason = subscription.take()
    assert announced == 1_000
    assert len(changes) <= 3
    assert reason is not None


async def message_record(app: FastAPI, message_id: str) -> MessageRecord:
    async with app.state.database.reading() as connection:
        row = await MessageRepository(connection, "default").get("slow", message_id)
    assert row is not None
    return row


async def test_a_lost_listen_connection_is_replaced_and_streams_resync(database_url: str, served: Any) -> None:
    app, url = served()
    listener = app.state.event_listener
    async with httpx.AsyncClient(base_url=url) as client:
        await new_session(client, "relisten")
        async with open_stream(client, "relisten") as stream:
            for _ in range(100):
                if listener.backend_pid is not None:
                    break
                await asyncio.sleep(0.05)
            killed = listener.backend_pid
            connection = await asyncpg.connect(plain_dsn(database_url))
            try:
                assert await connection.fetchval("SELECT pg_terminate_backend($1)", killed)
            finally:
                await connection.close()
            resync = await stream.next(within=15)
            assert resync.type == "resync"
            assert listener.backend_pid not in (None, killed)
            await append(client, "relisten", user("heard again", id="m1"))
            assert [event.id for event in await stream.messages(1)] == ["1"]
