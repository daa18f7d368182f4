"""``/ui``: the built-in viewer's two pages and their assets, files from the ``app.ui`` package.

The pages carry no data, so they are open like ``/docs``; their scripts fetch everything from the API with
the caller's key. A strict Content-Security-Policy keeps them to this origin: no script, style or request
leaves the service, and stored text (always written into the page as text) could not run even if it slipped
into markup.
"""

from importlib import resources
from typing import Final

from fastapi import APIRouter, Request, Response
from starlette.staticfiles import StaticFiles

router = APIRouter(include_in_schema=False)

OPEN_PATHS: Final = frozenset({"/ui"})
OPEN_PREFIX: Final = "/ui/"
"""The viewer's pages and assets: open with auth on, since they hold no data."""

_STATIC: Final = resources.files("app.ui").joinpath("static")
_ASSETS: Final = StaticFiles(packages=[("app.ui", "static")])

CONTENT_SECURITY_POLICY: Final = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
PAGE_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    # Revalidated on every load, so a new version of the service never runs against an old script.
    "Cache-Control": "no-cache",
}

SESSIONS_PAGE: Final = _STATIC.joinpath("sessions.html").read_bytes()
SESSION_PAGE: Final = _STATIC.joinpath("session.html").read_bytes()


def _page(html: bytes) -> Response:
    return Response(html, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


@router.get("/ui")
@router.get("/ui/")
async def sessions_page() -> Response:
    return _page(SESSIONS_PAGE)


@router.get("/ui/sessions/{session_id:path}")
async def session_page() -> Response:
    """Any id gets the page (ids may hold a slash); the page itself says when the session does not exist."""
    return _page(SESSION_PAGE)


@router.get("/ui/assets/{path:path}")
async def asset(path: str, request: Request) -> Response:
    """A stylesheet or script; ``StaticFiles`` refuses paths outside the folder and answers conditional GETs."""
    response = await _ASSETS.get_response(path, request.scope)
    response.headers.update(PAGE_HEADERS)
    return response
