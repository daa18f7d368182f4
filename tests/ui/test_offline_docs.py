"""The docs and the viewer load nothing from outside the service: Swagger UI comes from a package
(fastapi-offline), so ``/docs`` shows the operations on a machine with no route to a CDN, as this one."""

from typing import Any

import pytest

from tests.ui.conftest import importable
from tests.ui.seed import SESSION_ID

expect = importable("playwright.sync_api").expect


def outside(tab: Any, base: str) -> list[str]:
    return [r["url"] for r in tab.requests if not r["url"].startswith((f"{base}/", "data:", "blob:"))]


def test_the_docs_page_shows_the_operations_from_the_services_own_files(viewer: str, open_tab: Any) -> None:
    tab = open_tab()
    page = tab.page
    page.goto(f"{viewer}/docs")

    append = page.locator(".opblock", has_text="/sessions/{session_id}/messages").filter(has_text="POST")
    expect(append).to_have_count(1)
    expect(page.locator(".opblock-summary-path", has_text="/chat")).to_have_count(1)
    append.locator(".opblock-summary").click()
    expect(append).to_contain_text("Why does the build fail?")
    tab.screenshot("docs")
    assert outside(tab, viewer) == []
    assert any(r["url"].endswith("swagger-ui-bundle.js") for r in tab.requests)


@pytest.mark.parametrize(
    ("path", "loaded"),
    [("/ui", "#session-list li"), (f"/ui/sessions/{SESSION_ID}", "#analytics-panel dd")],
)
def test_every_request_a_viewer_page_makes_goes_to_the_service(
    viewer: str, open_tab: Any, path: str, loaded: str
) -> None:
    """Waits for what the page shows last rather than for an idle network: the session page keeps its event
    stream open."""
    tab = open_tab()
    tab.page.goto(f"{viewer}{path}")
    expect(tab.page.locator(loaded).first).to_be_visible()
    tab.page.wait_for_load_state("load")

    assert outside(tab, viewer) == []
    assert len(tab.requests) > 2
