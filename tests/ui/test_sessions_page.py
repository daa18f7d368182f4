"""The sessions list in a real browser: sessions newest first, reached from the keyboard, and the message
search, disabled with a note until the service has ``GET /search`` and landing on the hit once it does."""

import re
from typing import Any

from tests.ui.conftest import importable
from tests.ui.seed import CUT_ID, SESSION_ID, TITLE

expect = importable("playwright.sync_api").expect


def test_the_list_shows_the_sessions_and_leads_to_one_from_the_keyboard(viewer: str, open_tab: Any) -> None:
    tab = open_tab()
    page = tab.page
    page.goto(f"{viewer}/ui")

    link = page.get_by_role("link", name=TITLE)
    expect(link).to_be_visible()
    expect(page.locator(".session", has=link)).to_contain_text("9 messages")
    tab.screenshot("sessions")
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{viewer}/ui/sessions/{SESSION_ID}")
    expect(page.get_by_role("heading", level=1)).to_have_text(TITLE)


def test_search_is_disabled_with_a_note_while_the_service_has_no_search(viewer: str, open_tab: Any) -> None:
    page = open_tab().page
    page.goto(f"{viewer}/ui")

    expect(page.locator("#search-note")).to_contain_text("GET /search")
    expect(page.get_by_role("searchbox")).to_be_disabled()
    expect(page.get_by_role("button", name="Search")).to_be_disabled()


def test_where_the_service_has_search_a_hit_lands_on_its_message(viewer: str, open_tab: Any) -> None:
    """The service has no search yet: the test plays the endpoint the page is built for (listed in the
    OpenAPI document, answering hits with the session, the message id, its seq and a highlighted snippet)."""
    queries: list[str] = []

    def with_search(route: Any) -> None:
        response = route.fetch()
        document = response.json()
        document["paths"]["/search"] = {"get": {"responses": {"200": {"description": "hits"}}}}
        route.fulfill(response=response, json=document)

    def search(route: Any) -> None:
        queries.append(route.request.url)
        hit = {"sessionId": SESSION_ID, "messageId": CUT_ID, "seq": 6, "snippet": "error TS1005: <b>';' expected</b>"}
        route.fulfill(json={"hits": [hit], "nextCursor": None, "hasMore": False})

    tab = open_tab()
    page = tab.page
    page.route("**/openapi.json", with_search)
    page.route(re.compile(r"/search\?"), search)
    page.goto(f"{viewer}/ui")

    page.get_by_role("searchbox").fill("semicolon")
    page.keyboard.press("Enter")
    hit = page.locator("#search-results li")
    expect(hit).to_have_count(1)
    expect(hit.locator("mark")).to_have_text("';' expected")
    assert queries and "q=semicolon" in queries[0]
    tab.screenshot("sessions-search")

    hit.get_by_role("link").click()
    page.wait_for_url(f"{viewer}/ui/sessions/{SESSION_ID}#stored-{CUT_ID}")
    landed = page.locator(f"#stored-{CUT_ID}")
    expect(landed).to_be_focused()
    expect(landed).to_have_class(re.compile("selected"))
