"""The viewer with auth on: the key is asked for once, kept in the tab's sessionStorage, sent as a bearer
header on every API call and never put in a URL; another tab asks again, and a wrong key is said to be wrong."""

from typing import Any

from tests.trust.keys import READER
from tests.ui.conftest import importable
from tests.ui.seed import SESSION_ID, TITLE

expect = importable("playwright.sync_api").expect

API_PREFIXES = ("/sessions", "/chat")


def enter_key(page: Any, key: str) -> None:
    dialog = page.get_by_role("dialog", name="API key")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Key").fill(key)
    dialog.get_by_role("button", name="Use this key").click()


def test_the_key_is_asked_once_kept_in_the_tab_and_sent_only_as_a_header(keyed_viewer: str, open_tab: Any) -> None:
    tab = open_tab()
    page = tab.page
    page.goto(f"{keyed_viewer}/ui")
    expect(page.get_by_role("dialog", name="API key")).to_be_visible()
    tab.screenshot("sessions-key")
    enter_key(page, READER)
    page.get_by_role("link", name=TITLE).click()
    expect(page.locator("#model-view article").first).to_be_visible()
    tab.show_payload()
    page.reload()
    expect(page.locator("#model-view article").first).to_be_visible()

    expect(page.get_by_role("dialog")).to_have_count(0)
    assert page.evaluate("sessionStorage.getItem('projector.apiKey')") == READER
    assert all(READER not in request["url"] for request in tab.requests)
    assert READER not in page.url
    api_calls = [r for r in tab.requests if r["url"].removeprefix(keyed_viewer).startswith(API_PREFIXES)]
    authorized = [r for r in api_calls if r["headers"].get("authorization") == f"Bearer {READER}"]
    assert len(api_calls) > 5
    # Only the very first call went without a key: the one whose 401 asked for it.
    assert len(authorized) == len(api_calls) - 1


def test_another_tab_asks_again_and_forgetting_the_key_asks_again(keyed_viewer: str, open_tab: Any) -> None:
    first = open_tab().page
    first.goto(f"{keyed_viewer}/ui/sessions/{SESSION_ID}")
    enter_key(first, READER)
    expect(first.locator("#transcript article").first).to_be_visible()

    second = open_tab().page
    second.goto(f"{keyed_viewer}/ui/sessions/{SESSION_ID}")
    expect(second.get_by_role("dialog", name="API key")).to_be_visible()

    first.get_by_role("button", name="Forget API key").click()
    expect(first.get_by_role("dialog", name="API key")).to_be_visible()
    assert first.evaluate("sessionStorage.getItem('projector.apiKey')") is None


def test_a_wrong_key_is_said_to_be_wrong_and_a_right_one_then_works(keyed_viewer: str, open_tab: Any) -> None:
    page = open_tab().page
    page.goto(f"{keyed_viewer}/ui")
    enter_key(page, "not-a-key-of-this-service")

    expect(page.get_by_role("dialog", name="API key")).to_contain_text("did not accept")
    enter_key(page, READER)
    expect(page.get_by_role("link", name=TITLE)).to_be_visible()


def test_closing_the_key_prompt_says_a_key_is_needed(keyed_viewer: str, open_tab: Any) -> None:
    page = open_tab().page
    page.goto(f"{keyed_viewer}/ui")
    expect(page.get_by_role("dialog", name="API key")).to_be_visible()
    page.keyboard.press("Escape")

    expect(page.get_by_role("alert")).to_contain_text("needs an API key")
