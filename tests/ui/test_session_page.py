"""The session page in a real browser: the stored messages beside the model view, what the model view left
out or changed marked with the reason, the context bar, the analytics, the /chat payload, and new messages
arriving without a reload: through the event stream, or by polling where a service has none."""

import re
from typing import Any

import httpx
import pytest

from tests.api.wire import assistant, tool_call, tool_result, user
from tests.ui.conftest import PHONE, importable
from tests.ui.seed import CUT_ID, HIDDEN_ID, HIDDEN_REASON, SESSION_ID, STUBBED_ID, TITLE, messages

expect = importable("playwright.sync_api").expect

EVENTS_PATH = "/sessions/{session_id}/events"


def open_session(open_tab: Any, viewer: str, session_id: str = SESSION_ID, **tab: Any) -> Any:
    opened = open_tab(**tab)
    opened.page.goto(f"{viewer}/ui/sessions/{session_id}")
    expect(opened.page.locator("#model-view article").first).to_be_visible()
    return opened


def test_the_session_page_shows_every_stored_message_beside_the_model_view(viewer: str, open_tab: Any) -> None:
    tab = open_session(open_tab, viewer)
    page = tab.page

    expect(page.get_by_role("heading", level=1)).to_have_text(TITLE)
    expect(page.locator("#transcript > li > article")).to_have_count(len(messages()))
    expect(page.locator("#transcript")).to_contain_text("The CI build fails since this morning.")
    expect(page.locator("#model-view")).to_contain_text("The CI build fails since this morning.")
    tab.screenshot("session")


def test_a_message_left_out_of_the_model_view_is_marked_there_with_its_reason(viewer: str, open_tab: Any) -> None:
    page = open_session(open_tab, viewer).page

    marker = page.locator("#model-view .marker", has_text=HIDDEN_ID)
    expect(marker).to_contain_text("not sent")
    expect(marker).to_contain_text(HIDDEN_REASON)
    expect(page.locator(f"#stored-{HIDDEN_ID} .fate")).to_contain_text(HIDDEN_REASON)


def test_stubbed_and_cut_results_are_badged_with_the_reason(viewer: str, open_tab: Any) -> None:
    page = open_session(open_tab, viewer).page

    stubbed = page.locator("#model-view article", has=page.locator(f"a[href='#stored-{STUBBED_ID}']"))
    expect(stubbed.locator(".badge")).to_have_text(re.compile("stubbed", re.I))
    expect(stubbed).to_contain_text("[Old tool result content cleared]")
    expect(stubbed.locator(".reasons")).to_contain_text("compacted")
    cut = page.locator("#model-view article", has=page.locator(f"a[href='#stored-{CUT_ID}']"))
    expect(cut.locator(".badge")).to_have_text(re.compile("cut", re.I))
    expect(cut.locator(".reasons")).to_contain_text("truncated")


def test_a_message_the_model_view_moved_is_badged_repaired_and_a_stray_result_not_sent(
    viewer: str, open_tab: Any
) -> None:
    history = [
        user("Run it.", id="r1"),
        tool_result("call_gone", "bash", "a result whose call is not stored", id="r2"),
        tool_call("call_1", "bash", id="r3", command="make"),
        user("Still there?", id="r4"),
        tool_result("call_1", "bash", "built", id="r5"),
    ]
    with httpx.Client(base_url=viewer) as client:
        assert client.post("/sessions", json={"id": "repaired"}).status_code == 201
        assert client.post("/sessions/repaired/messages", json={"messages": history}).status_code == 201
    page = open_session(open_tab, viewer, "repaired").page

    moved = page.locator("#model-view article", has=page.locator("a[href='#stored-r4']"))
    expect(moved.locator(".badge")).to_have_text(re.compile("repaired", re.I))
    expect(moved.locator(".reasons")).to_contain_text("moved r4 after the results of call_1")
    expect(page.locator("#model-view .marker", has_text="r2")).to_contain_text("its call is not in this view")


def test_ids_named_like_javascript_object_members_are_only_ids(viewer: str, open_tab: Any) -> None:
    history = [
        user("Run it.", id="constructor"),
        tool_result("call_gone", "bash", "a result whose call is not stored", id="__proto__"),
        tool_call("call_1", "bash", id="hasOwnProperty", command="make"),
        tool_result("call_1", "bash", "built", id="toString"),
    ]
    with httpx.Client(base_url=viewer) as client:
        assert client.post("/sessions", json={"id": "members"}).status_code == 201
        assert client.post("/sessions/members/messages", json={"messages": history}).status_code == 201
    page = open_session(open_tab, viewer, "members").page

    expect(page.locator("#model-view .marker", has_text="__proto__")).to_contain_text("its call is not in this view")
    expect(page.locator("#model-view")).not_to_contain_text("native code")
    expect(page.locator("#transcript > li > article")).to_have_count(len(history))
    expect(page.locator("#context-body")).not_to_contain_text("Loading")


def test_a_right_to_left_override_in_stored_text_reorders_only_that_text(viewer: str, open_tab: Any) -> None:
    spoofed = "bash\u202eexe.txt"
    history = [user("Run it."), tool_call("c2", spoofed, id="rlo-call"), tool_result("c2", spoofed, "ok")]
    with httpx.Client(base_url=viewer) as client:
        assert client.post("/sessions", json={"id": "bidi"}).status_code == 201
        assert client.post("/sessions/bidi/messages", json={"messages": history}).status_code == 201
    page = open_session(open_tab, viewer, "bidi").page

    label = page.locator("#stored-rlo-call .part-label")
    expect(label.locator("code")).to_have_text(spoofed)
    isolated = label.evaluate("p => [...p.children].map((child) => getComputedStyle(child).unicodeBidi)")
    assert set(isolated) == {"isolate"}


def test_a_long_text_shown_whole_is_laid_out_without_kerning(viewer: str, open_tab: Any) -> None:
    """Kerning one unbroken run of a million 'A's (base64 of zeros) kept Chromium busy for minutes."""
    with httpx.Client(base_url=viewer) as client:
        assert client.post("/sessions", json={"id": "zeros"}).status_code == 201
        batch = {"messages": [user("A" * 50_000, id="zeros-1")]}
        assert client.post("/sessions/zeros/messages", json=batch).status_code == 201
    page = open_session(open_tab, viewer, "zeros").page

    page.locator("#stored-zeros-1 button.link-button").click()

    text = page.locator("#stored-zeros-1 .text")
    expect(text).to_have_text("A" * 50_000)
    assert text.evaluate("block => getComputedStyle(block).fontKerning") == "none"


def test_a_model_message_links_to_the_stored_message_it_came_from_and_back(viewer: str, open_tab: Any) -> None:
    page = open_session(open_tab, viewer).page

    page.locator("#model-view article", has_text="[Old tool result content cleared]").get_by_role(
        "link", name=STUBBED_ID
    ).click()
    stored = page.locator(f"#stored-{STUBBED_ID}")
    expect(stored).to_be_focused()
    expect(stored).to_have_class(re.compile("selected"))
    assert page.url.endswith(f"#stored-{STUBBED_ID}")

    stored.locator(".fate").get_by_role("link").click()
    expect(page.locator("#model-view article:focus")).to_contain_text("[Old tool result content cleared]")


def test_links_between_the_columns_work_from_the_keyboard(viewer: str, open_tab: Any) -> None:
    page = open_session(open_tab, viewer).page

    page.locator(f"#model-view a[href='#stored-{CUT_ID}']").focus()
    page.keyboard.press("Enter")
    expect(page.locator(f"#stored-{CUT_ID}")).to_be_focused()


def test_the_context_bar_draws_the_sections_against_the_window_and_the_threshold(viewer: str, open_tab: Any) -> None:
    page = open_session(open_tab, viewer).page
    context = page.locator("#context-body")

    expect(context).to_contain_text("of 200,000 tokens")
    # The window less the room the catalog says the model's answer may take (64,000 for claude-sonnet-4-5).
    expect(context).to_contain_text("Compaction at 136,000")
    expect(context).to_contain_text("usage on m7")
    expect(context.locator(".segment.section-toolResults")).to_have_count(1)
    bar = context.locator(".context-bar").bounding_box()
    threshold = context.locator(".threshold").bounding_box()
    assert bar is not None and threshold is not None
    assert (threshold["x"] - bar["x"]) / bar["width"] == pytest.approx(0.68, abs=0.01)


def test_the_chat_payload_is_built_for_the_chosen_provider(viewer: str, open_tab: Any) -> None:
    tab = open_session(open_tab, viewer)
    page = tab.page

    page.get_by_label("Provider", exact=True).select_option("openai")
    page.get_by_label("Model", exact=True).fill("gpt-4.1")
    page.get_by_role("button", name="Show", exact=True).click()
    payload = tab.show_payload()
    expect(payload).to_contain_text("openai · gpt-4.1")
    expect(payload.locator("pre")).to_contain_text('"tool_calls"')
    expect(payload.locator("pre")).to_contain_text('"role": "tool"')
    tab.screenshot("session-payload")


def test_a_message_appended_through_the_api_arrives_through_the_event_stream(viewer: str, open_tab: Any) -> None:
    with httpx.Client(base_url=viewer) as client:
        assert client.post("/sessions", json={"id": "live", "title": "Live"}).status_code == 201
        first = client.post("/sessions/live/messages", json={"messages": [user("Are you there?", id="l1")]})
        assert first.status_code == 201
        tab = open_session(open_tab, viewer, "live")
        page = tab.page
        page.evaluate("window.sameDocument = true")
        expect(page.locator("#live-status")).to_contain_text("following the event stream")

        later = client.post("/sessions/live/messages", json={"messages": [assistant("Here I am.", id="l2")]})
        assert later.status_code == 201

    expect(page.locator("#stored-l2")).to_contain_text("Here I am.")
    expect(page.locator("#model-view")).to_contain_text("Here I am.")
    expect(page.locator("#live-status")).to_contain_text("1 new since the page opened")
    assert page.evaluate("window.sameDocument") is True
    streams = [request for request in tab.requests if request["url"].endswith("/sessions/live/events")]
    assert [request["headers"].get("last-event-id") for request in streams] == ["1"]


def test_a_session_deleted_while_it_is_followed_stops_the_page_following_it(viewer: str, open_tab: Any) -> None:
    """Created again under its id, it is another conversation: the page never mixes its messages in."""
    with httpx.Client(base_url=viewer) as client:
        assert client.post("/sessions", json={"id": "gone"}).status_code == 201
        assert (
            client.post("/sessions/gone/messages", json={"messages": [user("First life", id="g1")]}).status_code == 201
        )
        page = open_session(open_tab, viewer, "gone").page
        expect(page.locator("#live-status")).to_contain_text("following the event stream")
        assert client.delete("/sessions/gone").status_code == 204
        expect(page.locator("#live-status")).to_contain_text("This session was deleted")
        assert client.post("/sessions", json={"id": "gone"}).status_code == 201
        again = client.post("/sessions/gone/messages", json={"messages": [user("Second life", id="g2")]})
        assert again.status_code == 201
    page.wait_for_timeout(2_500)
    expect(page.locator("#stored-g1")).to_contain_text("First life")
    expect(page.locator("#stored-g2")).to_have_count(0)
    expect(page.locator("#live-status")).to_contain_text("This session was deleted")


def test_where_the_service_has_no_event_stream_the_page_polls(viewer: str, open_tab: Any) -> None:
    """A service without the stream (played by an OpenAPI document that lists none)."""

    def without_events(route: Any) -> None:
        response = route.fetch()
        document = response.json()
        del document["paths"][EVENTS_PATH]
        route.fulfill(response=response, json=document)

    with httpx.Client(base_url=viewer) as client:
        assert client.post("/sessions", json={"id": "polled"}).status_code == 201
        assert client.post("/sessions/polled/messages", json={"messages": [user("Hello?", id="p1")]}).status_code == 201
        tab = open_tab()
        tab.page.route("**/openapi.json", without_events)
        tab.page.goto(f"{viewer}/ui/sessions/polled")
        expect(tab.page.locator("#live-status")).to_contain_text("checking for new messages every 2 seconds")

        later = client.post(
            "/sessions/polled/messages", json={"messages": [assistant("Polled, not streamed.", id="p2")]}
        )
        assert later.status_code == 201

    expect(tab.page.locator("#stored-p2")).to_contain_text("Polled, not streamed.")
    assert not [request for request in tab.requests if "/events" in request["url"]]


def test_the_analytics_panel_shows_turns_tools_tokens_and_cost(viewer: str, open_tab: Any) -> None:
    page = open_session(open_tab, viewer).page
    panel = page.locator("#analytics-panel")

    expect(panel).to_be_visible()
    expect(panel).to_contain_text("3 (2 answered")
    expect(panel).to_contain_text("bash 1, read_file 1")
    expect(panel).to_contain_text("18,400 in · 60 out")
    expect(panel).to_contain_text("anthropic/claude-sonnet-4-5")
    expect(panel.locator("dd", has_text="$")).to_have_count(1)


def test_an_amendment_through_the_api_updates_the_model_view_without_a_reload(viewer: str, open_tab: Any) -> None:
    with httpx.Client(base_url=viewer) as client:
        assert client.post("/sessions", json={"id": "amended"}).status_code == 201
        batch = [user("Keep this.", id="a1"), user("Hide this later.", id="a2")]
        assert client.post("/sessions/amended/messages", json={"messages": batch}).status_code == 201
        page = open_session(open_tab, viewer, "amended").page
        expect(page.locator("#model-view .marker")).to_have_count(0)

        hidden = client.patch("/sessions/amended/messages/a2", json={"metadata": {"eligibleForModelContext": False}})
        assert hidden.status_code == 200

    expect(page.locator("#model-view .marker", has_text="a2")).to_contain_text(HIDDEN_REASON)
    expect(page.locator("#stored-a2 .fate")).to_contain_text("not sent")


def test_at_phone_width_the_columns_stack_and_nothing_scrolls_sideways(viewer: str, open_tab: Any) -> None:
    tab = open_session(open_tab, viewer, viewport=PHONE)
    page = tab.page

    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    transcript = page.locator("#transcript").bounding_box()
    model = page.locator("#model-view").bounding_box()
    assert transcript is not None and model is not None
    assert model["y"] >= transcript["y"] + transcript["height"]
    assert transcript["width"] <= PHONE["width"]
    tab.screenshot("session-phone")
