"""``projector import`` against a real running server: a folder of sessions with a progress line per file,
twice without duplicates, and ``--follow`` keeping a live Claude Code session in sync as it is written."""

import io
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from app.cli import main
from app.import_command import follow
from app.importers.registry import parse_import
from app.main import create_app
from tests.conftest import settings_for_tests
from tests.importers import samples
from tests.importers.claude_code_lines import SESSION, answer, jsonl, prompt, results, text, tool_result, tool_use
from tests.trust.live_server import forget_everything, serving


@pytest.fixture
def live_url(database_url: str) -> Iterator[str]:
    with serving(create_app(settings_for_tests(), database_url=database_url)) as url:
        try:
            yield url
        finally:
            forget_everything(database_url)


def stored_ids(url: str, session_id: str) -> list[str]:
    response = httpx.get(f"{url}/sessions/{session_id}/messages", params={"limit": 500})
    return [message["id"] for message in response.json()["messages"]] if response.status_code == 200 else []


def run_import(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        main(["import", *argv])
    return int(exited.value.code or 0), capsys.readouterr().err


def test_a_folder_of_sessions_is_imported_once_with_a_line_per_file(
    live_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = tmp_path / "projects"
    (projects / "-home-dev-shop").mkdir(parents=True)
    (projects / "-home-dev-api").mkdir()
    first = samples.claude_code()
    second = first.replace(SESSION.encode(), b"5d0c2a8e-1111-4c55-9a57-2f3c7d1e9b10")
    (projects / "-home-dev-shop" / f"{SESSION}.jsonl").write_bytes(first)
    (projects / "-home-dev-api" / "5d0c2a8e.jsonl").write_bytes(second)
    (projects / "-home-dev-api" / "notes.txt").write_text("not a session")
    status, output = run_import("--format", "claude-code", "--url", live_url, str(projects), capsys=capsys)
    assert status == 0, output
    assert output.count("files, ") == 2  # one progress line per file (stderr is not a terminal here)
    [session] = parse_import("claude-code", first).sessions
    assert f"2 file(s): {2 * len(session.messages)} message(s) stored" in output
    assert stored_ids(live_url, SESSION) == [message.id for message in session.messages]
    assert len(stored_ids(live_url, "5d0c2a8e-1111-4c55-9a57-2f3c7d1e9b10")) == len(session.messages)
    status, again = run_import("--format", "claude-code", "--url", live_url, str(projects), capsys=capsys)
    assert status == 0
    assert f"2 file(s): 0 message(s) stored, {2 * len(session.messages)} already stored" in again


def test_a_refused_file_is_named_and_the_exit_status_says_so(
    live_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"{not json\n" + samples.claude_code())
    status, output = run_import("--format", "claude-code", "--strict", "--url", live_url, str(broken), capsys=capsys)
    assert status == 1
    assert "broken.jsonl: 422 line 1" in output


def test_a_file_of_another_format_is_named_and_the_exit_status_says_so(
    live_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "pi-session.jsonl").write_bytes(samples.pi())
    status, output = run_import("--format", "claude-code", "--url", live_url, str(sessions), capsys=capsys)
    assert status == 1
    assert "pi-session.jsonl: " in output
    assert "line(s) not read, nothing imported (is it a claude-code file?): line 1: " in output


def test_lines_that_cannot_be_read_are_named_beside_the_messages_imported(
    live_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"{not json\n" + samples.claude_code())
    status, output = run_import("--format", "claude-code", "--url", live_url, str(damaged), capsys=capsys)
    assert status == 0
    assert "damaged.jsonl: 1 line(s) not read: line 1: " in output
    [session] = parse_import("claude-code", samples.claude_code()).sessions
    assert stored_ids(live_url, session.id) == [message.id for message in session.messages]


def test_follow_keeps_a_live_claude_code_session_in_sync(live_url: str, tmp_path: Path) -> None:
    live = tmp_path / f"{SESSION}.jsonl"
    live.write_bytes(jsonl(prompt("u1", None, "Fix the test"), answer("a1", "u1", "msg_1", text("Looking."))))
    stop = threading.Event()
    out = io.StringIO()
    with httpx.Client(base_url=live_url) as client:
        follower = threading.Thread(
            target=follow,
            args=(client, live, "claude-code"),
            kwargs={"interval": 0.05, "out": out, "keep_going": lambda: not stop.is_set()},
        )
        follower.start()
        try:
            assert wait_for(lambda: stored_ids(live_url, SESSION) == ["u1"]), out.getvalue()
            with live.open("ab") as appending:  # the response goes on: same message id, next block
                appending.write(jsonl(answer("a2", "a1", "msg_1", tool_use("toolu_1", "Bash", command="pnpm test"))))
                appending.write(jsonl(results("r1", "a2", tool_result("toolu_1", "ok"))))
            time.sleep(0.3)  # a few polls: the answer may still grow, so it is not stored yet
            assert stored_ids(live_url, SESSION) == ["u1"]
            with live.open("ab") as appending:
                appending.write(jsonl(answer("a3", "r1", "msg_2", text("Fixed."), stop_reason="end_turn")))
                appending.write(jsonl(prompt("u2", "a3", "Thanks", second=9)))
            assert wait_for(lambda: stored_ids(live_url, SESSION) == ["u1", "msg_1", "r1", "msg_2", "u2"])
        finally:
            stop.set()
            follower.join(timeout=10)
    stored = httpx.get(f"{live_url}/sessions/{SESSION}/messages/msg_1").json()
    assert [part["type"] for part in stored["content"]] == ["text", "tool-call"]
    assert "new message(s)" in out.getvalue()


def test_follow_stores_the_last_answer_of_a_session_that_wrote_no_turn_end_when_it_stops(
    live_url: str, tmp_path: Path
) -> None:
    finished = tmp_path / f"{SESSION}.jsonl"
    finished.write_bytes(
        jsonl(prompt("u1", None, "Fix the test"), answer("a1", "u1", "msg_1", text("Fixed."), stop_reason="end_turn"))
    )
    polls = iter(range(3))
    with httpx.Client(base_url=live_url) as client:
        follow(client, finished, "claude-code", interval=0.01, out=io.StringIO(), keep_going=lambda: next(polls, 3) < 3)
    assert stored_ids(live_url, SESSION) == ["u1", "msg_1"]


def test_follow_stopped_by_sigterm_stores_the_last_answer_as_ctrl_c_does(live_url: str, tmp_path: Path) -> None:
    finished = tmp_path / f"{SESSION}.jsonl"
    finished.write_bytes(
        jsonl(prompt("u1", None, "Fix the test"), answer("a1", "u1", "msg_1", text("Fixed."), stop_reason="end_turn"))
    )
    command = [sys.executable, "-m", "app", "import", "--format", "claude-code", "--follow", "--interval", "0.05"]
    follower = subprocess.Popen(
        [*command, "--url", live_url, str(finished)], cwd=Path(__file__).resolve().parents[1], stderr=subprocess.PIPE
    )
    try:
        assert wait_for(lambda: stored_ids(live_url, SESSION) == ["u1"])
        follower.send_signal(signal.SIGTERM)  # how systemd, docker stop and kill end a follower
        _, errors = follower.communicate(timeout=30)
    finally:
        follower.kill()
    assert follower.returncode == 0, errors
    assert stored_ids(live_url, SESSION) == ["u1", "msg_1"]


def test_follow_tries_an_import_the_service_failed_again_though_the_file_did_not_change(tmp_path: Path) -> None:
    unchanged = tmp_path / "session.jsonl"
    unchanged.write_bytes(jsonl(prompt("u1", None, "Fix the test")))
    asked: list[str] = []

    def service(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.params["live"])
        if len(asked) == 1:
            return httpx.Response(503, json={"detail": "The database is unavailable; retry shortly."})
        return httpx.Response(200, json={"sessions": [{"id": SESSION, "stored": 1}]})

    polls = iter(range(5))
    out = io.StringIO()
    with httpx.Client(base_url="http://projector.test", transport=httpx.MockTransport(service)) as client:
        follow(client, unchanged, "claude-code", interval=0.01, out=out, keep_going=lambda: next(polls, 5) < 5)
    assert asked == ["true", "true", "false"]
    assert "503 The database is unavailable" in out.getvalue() and "1 new message(s)" in out.getvalue()


def wait_for(condition: object, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_messages_not_stored_as_the_file_has_them_are_named_and_the_exit_status_says_so(
    live_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "history.json"
    question = {"id": "q1", "role": "user", "content": "What is due today?"}
    history.write_text(json.dumps([question, {"id": "a1", "role": "assistant", "content": "Nothing."}]))
    status, _ = run_import("--format", "ai-sdk", "--url", live_url, str(history), capsys=capsys)
    assert status == 0
    edited = [
        question,
        {"id": "a1", "role": "assistant", "content": "The quarterly report."},
        {"id": "q2", "role": "user", "content": [{"type": "text"}]},
    ]
    history.write_text(json.dumps(edited))
    status, output = run_import("--format", "ai-sdk", "--url", live_url, str(history), capsys=capsys)
    assert status == 1
    assert "history.json: session ai-sdk-" in output
    assert ": a1 was stored before with other content (kept)" in output
    assert ": q2 refused (content[0].text): " in output


def test_a_session_archived_from_the_command_line_imports_back_as_it_was(
    live_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = samples.projector()
    original = tmp_path / "original.jsonl"
    original.write_bytes(data)
    status, output = run_import("--format", "projector", "--url", live_url, str(original), capsys=capsys)
    assert status == 0, output
    written = tmp_path / "out" / "s.jsonl"
    written.parent.mkdir()
    with pytest.raises(SystemExit) as exited:
        main(["archive", "s-archived", "--url", live_url, "-o", str(written)])
    assert exited.value.code == 0
    lines = [json.loads(line) for line in written.read_bytes().splitlines()]
    assert [(line["type"], line.get("id")) for line in lines] == [
        (line["type"], line.get("id")) for line in map(json.loads, data.splitlines())
    ]
    with pytest.raises(SystemExit) as missing:
        main(["archive", "no-such-session", "--url", live_url, "-o", str(tmp_path / "none.jsonl")])
    assert missing.value.code == 1
    assert "404" in capsys.readouterr().err and not list(tmp_path.glob("none.jsonl*"))


@pytest.fixture
def cut_short_url() -> Iterator[str]:
    """A server whose archive ends cleanly (a complete HTTP answer) before its end line, as a proxy that gave up
    may answer."""
    archive = samples.projector().splitlines(keepends=True)[:-1]
    body = b"".join(archive)

    class CutShort(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/x-ndjson")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), CutShort)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_an_archive_that_arrives_without_its_end_line_leaves_no_file(
    cut_short_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "s.jsonl"
    with pytest.raises(SystemExit) as exited:
        main(["archive", "s-archived", "--url", cut_short_url, "-o", str(target)])
    assert exited.value.code == 1
    assert "cut short" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
