"""The sessions list in a real browser: sessions newest first, reached from the keyboard, and the message
search: a hit lands on its message, and a service without search gets a disabled form with a note."""

import re
from typing import Any

from tests.ui.conftest import importable
from tests.ui.seed import ANSWER_ID, SESSION_ID, TITLE

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


def test_where_the_service_has_no_search_the_form_is_disabled_with_a_note(viewer: str, open_tab: Any) -> None:
    """A service without ``GET /search`` (played by an OpenAPI document that lists none)."""

    def without_search(route: Any) -> None:
        response = route.fetch()
        document = response.json()
        del document["paths"]["/search"]
        route.fulfill(response=response, json=document)

    page = open_tab().page
    page.route("**/openapi.json", without_search)
    page.goto(f"{viewer}/ui")

    expect(page.locator("#search-note")).to_contain_text("GET /search")
    expect(page.get_by_role("searchbox")).to_be_disabled()
    expect(page.get_by_role("button", name="Search")).to_be_disabled()


def test_a_search_hit_lands_on_its_message(viewer: str, open_tab: Any) -> None:
    """The real ``GET /search``: the hit names the session and the message, its words marked."""
    tab = open_tab()
    page = tab.page
    page.goto(f"{viewer}/ui")

    page.get_by_role("searchbox").fill("semicolon")
    page.keyboard.press("Enter")
    hit = page.locator("#search-results li")
    expect(hit).to_have_count(1)
    expect(hit.locator("mark")).to_have_text("semicolon")
    expect(hit).to_contain_text(TITLE)
    expect(hit).to_contain_text(ANSWER_ID)
    assert any("/search?q=semicolon" in request["url"] for request in tab.requests)
    tab.screenshot("sessions-search")

    hit.get_by_role("link").click()
    page.wait_for_url(f"{viewer}/ui/sessions/{SESSION_ID}#stored-{ANSWER_ID}")
    landed = page.locator(f"#stored-{ANSWER_ID}")
    expect(landed).to_be_focused()
    expect(landed).to_have_class(re.compile("selected"))
