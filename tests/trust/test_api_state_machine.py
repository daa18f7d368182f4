"""A Hypothesis state machine drives the API over real HTTP (appends, retries, conflicts, amendments,
compactions, paging, projections) against a model of what must be stored, and after every step checks the
invariants: seq is gap-free from 1, no id is stored twice, every page walk in either direction concatenates
to the full history, retries and Idempotency-Key replays change nothing, and projections only show stored
messages (the debug view shows each of them, in order)."""

import uuid
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from app.main import create_app
from tests.conftest import settings_for_tests
from tests.trust.live_server import forget_everything, serving

TURN = st.sampled_from(["user", "assistant", "tool round", "reasoning"])
METADATA_VALUE = st.one_of(st.none(), st.integers(-5, 5), st.text("abc", max_size=3), st.booleans())
STEPS_RUN: list[str] = []


class ApiHistory(RuleBasedStateMachine):
    base_url: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        self.http = httpx.Client(base_url=self.base_url, timeout=10)
        self.session = f"sm_{uuid.uuid4().hex[:12]}"
        self.stored: list[dict[str, Any]] = []
        self.kept: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.counter = 0

    def teardown(self) -> None:
        self.http.close()

    def fresh_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def turn(self, shape: str) -> list[dict[str, Any]]:
        match shape:
            case "user":
                return [{"id": self.fresh_id("u"), "role": "user", "content": f"question {self.counter}"}]
            case "assistant":
                return [{"id": self.fresh_id("a"), "role": "assistant", "content": f"answer {self.counter}"}]
            case "reasoning":
                parts = [{"type": "reasoning", "text": "thinking"}, {"type": "text", "text": "so"}]
                return [{"id": self.fresh_id("r"), "role": "assistant", "content": parts}]
            case _:
                call = self.fresh_id("call_")
                request = {"type": "tool-call", "toolCallId": call, "toolName": "read", "input": {"path": "a"}}
                output = {"type": "text", "value": "contents"}
                result = {"type": "tool-result", "toolCallId": call, "toolName": "read", "output": output}
                return [
                    {"id": self.fresh_id("c"), "role": "assistant", "content": [request]},
                    {"id": self.fresh_id("t"), "role": "tool", "content": [result]},
                ]

    def post_messages(self, batch: list[dict[str, Any]], key: str | None = None) -> httpx.Response:
        headers = {"idempotency-key": key} if key else {}
        return self.http.post(f"/sessions/{self.session}/messages", json={"messages": batch}, headers=headers)

    @initialize()
    def create_session(self) -> None:
        assert self.http.post("/sessions", json={"id": self.session}).status_code == 201

    @rule(shapes=st.lists(TURN, min_size=1, max_size=3))
    def append(self, shapes: list[str]) -> None:
        """As a careful client appends: with an Idempotency-Key (retries are a separate rule, without one)."""
        batch = [message for shape in shapes for message in self.turn(shape)]
        key = f"k-{self.session}-{self.counter}"
        response = self.post_messages(batch, key)
        assert response.status_code == 201, response.text
        stored = response.json()["messages"]
        assert [m["id"] for m in stored] == [m["id"] for m in batch]
        assert [m["seq"] for m in stored] == list(range(len(self.stored) + 1, len(self.stored) + len(batch) + 1))
        self.stored.extend({**m, "metadata": {}} for m in batch)
        self.kept[key] = ({"messages": batch}, response.content)
        STEPS_RUN.append("append")

    @precondition(lambda self: bool(self.stored))
    @rule(data=st.data())
    def retry_stored_messages(self, data: st.DataObject) -> None:
        chosen = data.draw(st.lists(st.sampled_from(self.stored), min_size=1, max_size=3, unique_by=lambda m: m["id"]))
        batch = [{key: m[key] for key in ("id", "role", "content")} for m in chosen]
        response = self.post_messages(batch)
        assert response.status_code == 200, response.text
        assert [m["id"] for m in response.json()["messages"]] == [m["id"] for m in batch]
        STEPS_RUN.append("retry")

    @precondition(lambda self: bool(self.kept))
    @rule(data=st.data())
    def replay_idempotency_key(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.kept)))
        body, first = self.kept[key]
        response = self.http.post(f"/sessions/{self.session}/messages", json=body, headers={"idempotency-key": key})
        assert response.content == first
        assert response.headers["idempotent-replayed"] == "true"
        other = self.http.post(
            f"/sessions/{self.session}/messages", json={"messages": []}, headers={"idempotency-key": key}
        )
        assert other.status_code == 422
        STEPS_RUN.append("replay")

    @precondition(lambda self: bool(self.stored))
    @rule(data=st.data())
    def conflicting_retry_is_refused(self, data: st.DataObject) -> None:
        known = data.draw(st.sampled_from(self.stored))
        changed = {"id": known["id"], "role": "user", "content": f"not what was said {uuid.uuid4().hex}"}
        response = self.post_messages([*self.turn("user"), changed])
        assert response.status_code == 409, response.text
        STEPS_RUN.append("conflict")

    @precondition(lambda self: bool(self.stored))
    @rule(data=st.data(), changes=st.dictionaries(st.sampled_from(["x", "y", "note"]), METADATA_VALUE, min_size=1))
    def amend_metadata(self, data: st.DataObject, changes: dict[str, Any]) -> None:
        index = data.draw(st.integers(0, len(self.stored) - 1))
        target = self.stored[index]
        response = self.http.patch(f"/sessions/{self.session}/messages/{target['id']}", json={"metadata": changes})
        assert response.status_code == 200, response.text
        merged = {**target["metadata"], **changes}
        target["metadata"] = {key: value for key, value in merged.items() if value is not None}
        assert {k: v for k, v in response.json()["metadata"].items() if k in ("x", "y", "note")} == target["metadata"]
        STEPS_RUN.append("amend")

    @precondition(lambda self: len(self.stored) >= 4)
    @rule()
    def compact(self) -> None:
        before = len(self.stored)
        response = self.http.post(f"/sessions/{self.session}/compactions", json={"summary": "what happened so far"})
        if response.status_code == 422:  # nothing old enough to compact: refused, nothing written
            assert response.json()["type"].endswith(("compaction-refused", "validation-error")), response.text
            return
        assert response.status_code == 201, response.text
        boundary, summary = response.json()["boundary"], response.json()["summary"]
        assert (boundary["seq"], summary["seq"]) == (before + 1, before + 2)
        self.stored.extend([{**boundary, "metadata": {}}, {**summary, "metadata": {}}])
        STEPS_RUN.append("compact")

    @rule(limit=st.integers(1, 7), order=st.sampled_from(["asc", "desc"]))
    def walk_every_page(self, limit: int, order: str) -> None:
        seen: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": limit, "order": order}
        for _ in range(len(self.stored) + 2):
            page = self.http.get(f"/sessions/{self.session}/messages", params=params).json()
            seen.extend(page["messages"])
            if not page["hasMore"]:
                break
            params = {"limit": limit, "order": order, ("before" if order == "desc" else "after"): page["nextCursor"]}
        expected = [m["id"] for m in self.stored]
        assert [m["id"] for m in seen] == (expected if order == "asc" else expected[::-1])
        STEPS_RUN.append("walk")

    @rule(view=st.sampled_from(["model", "transcript", "compact", "debug"]))
    def projection_shows_only_stored_messages(self, view: str) -> None:
        paging = {} if view in ("model", "compact") else {"limit": 500}
        response = self.http.get(f"/sessions/{self.session}/projection", params={"view": view, **paging})
        assert response.status_code == 200, response.text
        sources = [i for message in response.json()["messages"] for i in message["sourceMessageIds"]]
        stored_ids = [m["id"] for m in self.stored]
        assert set(sources) <= set(stored_ids)
        if view == "debug":
            assert list(dict.fromkeys(sources)) == stored_ids
        STEPS_RUN.append("projection")

    @invariant()
    def seq_is_gap_free_and_ids_unique(self) -> None:
        session = self.http.get(f"/sessions/{self.session}").json()
        assert session["messageCount"] == session["lastSeq"] == len(self.stored)
        listed = self.http.get(f"/sessions/{self.session}/messages", params={"limit": 500}).json()["messages"]
        assert [m["seq"] for m in listed] == list(range(1, len(self.stored) + 1))
        assert len({m["id"] for m in listed}) == len(listed)
        assert [(m["id"], m["content"]) for m in listed] == [(m["id"], m["content"]) for m in self.stored]


@pytest.fixture(scope="module")
def live_url(database_url: str) -> Iterator[str]:
    with serving(create_app(settings_for_tests(), database_url=database_url)) as url:
        try:
            yield url
        finally:
            forget_everything(database_url)


def test_the_api_keeps_its_invariants_under_random_operation_sequences(live_url: str) -> None:
    ApiHistory.base_url = live_url
    run_state_machine_as_test(
        ApiHistory,
        settings=settings(
            max_examples=12,
            stateful_step_count=25,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    print(f"state machine: {len(STEPS_RUN)} steps, {sorted(set(STEPS_RUN))}")
    assert {"append", "retry", "replay", "conflict", "amend", "compact", "walk", "projection"} <= set(STEPS_RUN)
