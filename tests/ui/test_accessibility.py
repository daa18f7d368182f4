"""axe-core (the engine behind Lighthouse's accessibility audit, shipped inside axe-playwright-python) finds no
violation on the viewer's pages, wide and at phone width: labels, landmarks, contrast, focusable scroll areas,
names for every control. A key prompt and a page with every kind of mark are checked too."""

from typing import Any

import pytest

from tests.ui.conftest import DESKTOP, PHONE, importable
from tests.ui.seed import SESSION_ID

expect = importable("playwright.sync_api").expect
axe = importable("axe_playwright_python.sync_playwright")

WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}}


def violations(page: Any) -> str:
    results = axe.Axe().run(page, options=WCAG_AA)
    return results.generate_report() if results.violations_count else ""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_sessions_page_has_no_accessibility_violations(viewer: str, open_tab: Any, viewport: Any) -> None:
    page = open_tab(viewport=viewport).page
    page.goto(f"{viewer}/ui")
    expect(page.locator(".session").first).to_be_visible()

    assert violations(page) == ""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_session_page_has_no_accessibility_violations(viewer: str, open_tab: Any, viewport: Any) -> None:
    tab = open_tab(viewport=viewport)
    page = tab.page
    page.goto(f"{viewer}/ui/sessions/{SESSION_ID}")
    expect(page.locator("#model-view .marker")).to_be_visible()
    tab.show_payload()

    assert violations(page) == ""


def test_the_key_prompt_has_no_accessibility_violations(keyed_viewer: str, open_tab: Any) -> None:
    page = open_tab().page
    page.goto(f"{keyed_viewer}/ui")
    expect(page.get_by_role("dialog", name="API key")).to_be_visible()

    assert violations(page) == ""
