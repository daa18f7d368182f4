"""A real browser against a real server: Debian's Chromium driven by Playwright's Python API, pointed at a
uvicorn serving the app on a loopback port over the test database.

Playwright's own browser download cannot work offline, so the browser is the system's ``chromium``; without
it, or without the ``playwright`` package, the browser tests skip and say which is missing (in CI, which
installs both, they fail instead). Each test gets a
fresh browser context (a new tab's sessionStorage) and keeps a screenshot of each page it looked at in
``test-output/ui/`` (or ``UI_SCREENSHOT_DIR``).
"""

import importlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import httpx
import orjson
import pytest

from app.main import create_app
from tests.conftest import settings_for_tests
from tests.trust.keys import API_KEYS, RUNTIME
from tests.trust.live_server import forget_everything, serving
from tests.ui.seed import seed_fix_the_build

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Playwright, ViewportSize

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(os.environ.get("UI_SCREENSHOT_DIR", Path(__file__).parents[2] / "test-output" / "ui"))
PATIENCE_MS = 10_000
"""How long an action or an assertion waits for the page: on a loaded two-core CI machine a /chat answer the
viewer asks for has taken over Playwright's default five seconds for an assertion."""
DESKTOP: "ViewportSize" = {"width": 1400, "height": 900}
PHONE: "ViewportSize" = {"width": 390, "height": 844}


def missing(reason: str) -> NoReturn:
    """Skips on a bare machine; in CI (which installs both) a missing browser is a failure, not a skip."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason, allow_module_level=True)


def importable(module: str) -> Any:
    """A browser-side module (Playwright, axe), or a skip that names what to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(f"the browser tests need {module.partition('.')[0]}: pip install -e '.[test]'")


# Per module, not per session: while sync Playwright runs, its event loop counts as running in this thread,
# and the async tests of the next module could not run theirs.
@pytest.fixture(scope="module")
def playwright() -> Iterator["Playwright"]:
    sync_api = importable("playwright.sync_api")
    sync_api.expect.set_options(timeout=PATIENCE_MS)
    with sync_api.sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: "Playwright") -> Iterator["Browser"]:
    chromium = shutil.which("chromium")
    if chromium is None:
        missing("the browser tests need Debian's chromium package: apt-get install chromium")
    launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
    yield launched
    launched.close()


@pytest.fixture(scope="module")
def viewer(database_url: str) -> Iterator[str]:
    """The service with auth off, holding the seeded session; its base URL."""
    with serving(create_app(settings_for_tests(), database_url=database_url)) as url:
        with httpx.Client(base_url=url) as client:
            seed_fix_the_build(client)
        try:
            yield url
        finally:
            forget_everything(database_url)


@pytest.fixture(scope="module")
def keyed_viewer(database_url: str) -> Iterator[str]:
    """The service with API keys, holding the seeded session in tenant ``acme``."""
    app = create_app(settings_for_tests(api_keys=orjson.dumps(API_KEYS).decode()), database_url=database_url)
    with serving(app) as url:
        with httpx.Client(base_url=url, headers={"authorization": f"Bearer {RUNTIME}"}) as client:
            seed_fix_the_build(client)
        try:
            yield url
        finally:
            forget_everything(database_url)


class Tab:
    """One browser tab and every request it made, so a test can say where the page went for what."""

    def __init__(self, context: "BrowserContext") -> None:
        self.context = context
        self.page: Page = context.new_page()
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.page.on("request", self._record)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _record(self, request: Any) -> None:
        self.requests.append({"url": request.url, "headers": request.headers})

    def show_payload(self) -> Any:
        """Opens the provider payload panel and waits for the /chat answer in it; the panel's body."""
        expect = importable("playwright.sync_api").expect
        self.page.get_by_text("Show the POST /chat answer").click()
        expect(self.page.locator("#payload-details")).to_have_attribute("open", "")
        body = self.page.locator("#payload-body")
        expect(body.locator("pre")).to_be_visible()
        return body

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def open_tab(browser: "Browser") -> Iterator[Any]:
    """``open_tab(viewport=PHONE)``: a new tab in a context of its own; a script error fails the test."""
    tabs: list[Tab] = []

    def opened(viewport: "ViewportSize" = DESKTOP) -> Tab:
        tab = Tab(browser.new_context(viewport=viewport))
        tab.page.set_default_timeout(PATIENCE_MS)
        tabs.append(tab)
        return tab

    yield opened
    for tab in tabs:
        tab.context.close()
    assert [error for tab in tabs for error in tab.errors] == []
