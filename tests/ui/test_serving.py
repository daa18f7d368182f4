"""How the viewer and the docs are served, over HTTP without a browser: the pages and their assets from the
package under a policy that keeps them to this origin, open with auth on (they hold no data, the API still
asks for a key), Swagger UI's files from the package, and request examples that the API accepts as they are."""

import re
import tomllib
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager

from app.api.schemas import AppendMessagesRequest, ChatRequestBody, CreateSessionRequest
from app.main import create_app
from tests.conftest import settings_for_tests
from tests.trust.keys import API_KEYS

PAGES = ["/ui", "/ui/", "/ui/sessions/fix-the-build", "/ui/sessions/a/b", "/ui/sessions/caf%C3%A9"]
STATIC = resources.files("app.ui").joinpath("static")
REFERENCE = re.compile(r"""(?:src|href)="([^"]+)"|from "([^"]+)"|import\("([^"]+)"\)""")


def static_files() -> list[str]:
    found = []
    for entry in STATIC.iterdir():
        if entry.is_file():
            found.append(entry.name)
        else:
            found.extend(f"{entry.name}/{inner.name}" for inner in entry.iterdir())
    return sorted(found)


@pytest.fixture
async def keyed_client(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings_for_tests(api_keys=orjson.dumps(API_KEYS).decode()), database_url=database_url)
    transport = httpx.ASGITransport(app=app)
    async with LifespanManager(app), httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        yield client


@pytest.mark.parametrize("path", PAGES)
async def test_each_page_is_html_under_a_policy_that_keeps_it_to_this_origin(
    client: httpx.AsyncClient, path: str
) -> None:
    response = await client.get(path)

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    policy = response.headers["content-security-policy"]
    for directive in ("default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"):
        assert directive in policy
    assert response.headers["referrer-policy"] == "no-referrer"
    assert '<html lang="en">' in response.text


async def test_the_two_pages_load_their_own_scripts(client: httpx.AsyncClient) -> None:
    listing = (await client.get("/ui")).text
    session = (await client.get("/ui/sessions/s1")).text

    assert 'src="/ui/assets/js/sessions-page.js"' in listing
    assert 'src="/ui/assets/js/session-page.js"' in session


async def test_pages_and_assets_are_open_with_auth_on_but_the_data_is_not(keyed_client: httpx.AsyncClient) -> None:
    for path in ("/ui", "/ui/sessions/s1", "/ui/assets/js/api.js", "/ui/assets/viewer.css", "/openapi.json"):
        assert (await keyed_client.get(path)).status_code == 200, path

    assert (await keyed_client.get("/sessions")).status_code == 401


@pytest.mark.parametrize(
    ("asset", "media_type"),
    [("js/session-page.js", "javascript"), ("js/live.js", "javascript"), ("viewer.css", "text/css")],
)
async def test_assets_are_served_with_the_type_a_browser_requires(
    client: httpx.AsyncClient, asset: str, media_type: str
) -> None:
    response = await client.get(f"/ui/assets/{asset}")

    assert response.status_code == 200
    assert media_type in response.headers["content-type"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-cache"
    revalidated = await client.get(f"/ui/assets/{asset}", headers={"if-none-match": response.headers["etag"]})
    assert revalidated.status_code == 304


@pytest.mark.parametrize("path", ["/ui/assets/missing.js", "/ui/assets/..%2F..%2F__init__.py", "/ui/assets/"])
async def test_nothing_outside_the_static_folder_is_served(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)

    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"


async def test_every_file_a_page_or_script_names_is_served_from_this_origin(client: httpx.AsyncClient) -> None:
    for name in static_files():
        text = STATIC.joinpath(name).read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, name
        folder = "/ui/assets/" + name.rpartition("/")[0]
        for match in REFERENCE.finditer(text):
            reference = next(group for group in match.groups() if group)
            if reference.startswith(("data:", "#")):
                continue
            target = reference if reference.startswith("/") else f"{folder.rstrip('/')}/{reference.removeprefix('./')}"
            assert (await client.get(target)).status_code == 200, f"{name} names {reference}"


def test_the_package_data_ships_every_static_file() -> None:
    """What pyproject's package-data globs take is what a wheel holds: each static file must match one."""
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = project["tool"]["setuptools"]["package-data"]["app.ui"]
    for name in static_files():
        assert any(PurePosixPath(f"static/{name}").match(pattern) for pattern in patterns), name


async def test_the_docs_load_swagger_ui_from_the_service(client: httpx.AsyncClient) -> None:
    page = (await client.get("/docs")).text
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)

    assert assets
    for asset in assets:
        assert asset.startswith("/"), asset
        response = await client.get(asset)
        assert response.status_code == 200, asset
    assert any(asset.endswith("swagger-ui-bundle.js") for asset in assets)


EXAMPLES: list[tuple[type[Any], str]] = [
    (CreateSessionRequest, "CreateSessionRequest"),
    (AppendMessagesRequest, "AppendMessagesRequest"),
    (ChatRequestBody, "ChatRequestBody"),
]


async def test_the_main_requests_carry_examples_in_the_openapi_document(client: httpx.AsyncClient) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]

    for model, name in EXAMPLES:
        examples = schemas[name]["examples"]
        assert examples
        for example in examples:
            model.model_validate(example)


async def test_the_examples_work_against_the_api_as_they_are(client: httpx.AsyncClient) -> None:
    session = CreateSessionRequest.model_json_schema()["examples"][0]
    batch = AppendMessagesRequest.model_json_schema()["examples"][0]
    chat = ChatRequestBody.model_json_schema()["examples"][0]

    assert (await client.post("/sessions", json=session)).status_code == 201
    assert (await client.post(f"/sessions/{session['id']}/messages", json=batch)).status_code == 201
    assert chat["sessionId"] == session["id"]
    answer = await client.post("/chat", json=chat)
    assert answer.status_code == 200, answer.text
    assert answer.json()["payload"]["messages"][0]["role"] == "user"
