"""A Markdown export is the whole conversation: streamed page by page into one document, or, when the client
asks for a ``limit``, one page that says where the next one is (a ``Link: <...>; rel="next"`` header, and a
closing note for whoever reads the file). Never a page silently cut short.

Blocks follow the walk: oldest first, or newest first with ``order=desc`` (each page's messages come oldest
first from the view and are turned around here).
"""

from collections.abc import AsyncIterator
from urllib.parse import quote

from fastapi import Request, Response

from app.api.paging import Walk
from app.api.streaming import ClosingStreamingResponse
from app.projections.markdown import continuation_note, markdown_blocks, title_block
from app.projections.types import Projection
from app.services.projections import SessionView

MEDIA_TYPE = "text/markdown; charset=utf-8"


def markdown_response(
    answer: SessionView,
    walk: Walk,
    request: Request,
    headers: dict[str, str],
    rest: AsyncIterator[Projection] | None,
    *,
    redact: bool,
) -> Response:
    """``rest``: the pages after the first, streamed into the same document; ``None``: this page only, which
    links to the next one while there is more. The title opens a walk that starts without a cursor."""
    title = title_block(answer.session.title, redact=redact) if walk.given_cursor is None else []
    blocks = [*title, *walk_blocks(answer.projection, walk)]
    if rest is not None:
        return ClosingStreamingResponse(_chunks(blocks, rest, walk), media_type=MEDIA_TYPE, headers=headers)
    if answer.has_more:
        following = request.url.remove_query_params(["after", "before"]).include_query_params(
            **{"before" if walk.backwards else "after": walk.next_cursor(answer.seqs) or ""}
        )
        target = f"{next_page_path(request)}?{following.query}"
        headers = {**headers, "Link": f'<{target}>; rel="next"'}
        blocks.append(continuation_note(target))
    return Response("\n\n".join(blocks) + "\n", media_type=MEDIA_TYPE, headers=headers)


def next_page_path(request: Request) -> str:
    """The path as a URL writes it: the session id in it is any printable text, which a header (Latin-1 only,
    where ``>`` and ``;`` end a link) and a Markdown link (where ``)`` or a space ends it) take only
    percent-encoded. The decoded path holds no ``/`` but the separators, since ids cannot."""
    return quote(request.scope["path"], safe="/")


def walk_blocks(projection: Projection, walk: Walk) -> list[str]:
    blocks = markdown_blocks(projection)
    return blocks[::-1] if walk.backwards else blocks


async def _chunks(first: list[str], rest: AsyncIterator[Projection], walk: Walk) -> AsyncIterator[bytes]:
    """The document as it is read: the first page's blocks, then each later page's, a blank line between
    blocks and a newline at the end."""
    written = bool(first)
    yield "\n\n".join(first).encode()
    async for projection in rest:
        blocks = walk_blocks(projection, walk)
        if blocks:
            yield (("\n\n" if written else "") + "\n\n".join(blocks)).encode()
            written = True
    yield b"\n"
