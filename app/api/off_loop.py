"""Large request bodies are decoded and validated in a worker thread, so one big append never stalls the
event loop (and with it ``/healthz`` and every other request). Small bodies take FastAPI's own path.

``OffLoopRoute`` reads the body, and past ``LARGE_BODY_BYTES`` decodes the JSON and validates it against the
route's body model in a worker thread, then hands FastAPI the validated model (which it takes as it is,
without validating again); an append body is read one message at a time (``batch_body``), since a thread
still holds the interpreter lock for as long as one call into C runs. Before validation, which is what
multiplies a body's memory, every body is held to the request's parts budget (``PROJECTOR_MAX_REQUEST_PARTS``:
the content parts of all its messages together), so a body within the byte limit cannot make millions of
part models. A body sent as anything but JSON (``fetch`` sends a string as ``text/plain``, ``requests``'
``data=`` sends no type at all) is 415 naming ``Content-Type``: FastAPI would hand its bytes to the model
and answer that the body is not an object.
"""

import json
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from anyio import to_thread
from fastapi.exceptions import HTTPException, RequestValidationError
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from app.api.batch_body import not_json, read_batch, too_deep
from app.api.schemas import AppendMessagesRequest
from app.errors import BadRequest, TooLarge, UnsupportedMediaType
from app.settings import Settings

LARGE_BODY_BYTES = 256 * 1024
"""Bodies from this size on are decoded and validated in a worker thread (a thread hop costs tens of
microseconds; decoding and validating 256 KB costs milliseconds)."""

UNPARSABLE = "There was an error parsing the body"
"""FastAPI's answer to a body it cannot read as text (not UTF-8)."""

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class OffLoopRoute(APIRoute):
    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()
        fields = self.dependant.body_params
        if len(fields) != 1:
            return handler
        field = fields[0]

        async def off_loop(request: Request) -> Response:
            body = await request.body()
            if not body:
                return await handler(request)
            if not _is_json(request):
                raise UnsupportedMediaType(
                    "Content-Type: the body is JSON and must be sent as application/json", field="Content-Type"
                )
            settings: Settings = request.app.state.settings
            if len(body) < LARGE_BODY_BYTES:
                try:
                    decoded = await request.json()
                except UnicodeDecodeError as error:
                    raise not_utf8(error) from None
                except ValueError:
                    return await handler(request)  # not JSON: FastAPI answers as it does
                except RecursionError:
                    raise too_deep() from None
                check_parts_budget(decoded, settings)
            else:
                # Starlette keeps the decoded body here, and FastAPI reads it back with ``request.json()``.
                request._json = await to_thread.run_sync(_decoded_and_validated, body, field, settings)
            return await handler(request)

        return off_loop


def check_parts_budget(decoded: Any, settings: Settings) -> None:
    """The content parts of every message a body carries, together, within ``max_request_parts``."""
    messages = decoded.get("messages") if isinstance(decoded, dict) else None
    if not isinstance(messages, list):
        return
    parts = sum(
        len(content)
        for message in messages
        if isinstance(message, dict) and isinstance(content := message.get("content"), list)
    )
    if parts > settings.max_request_parts:
        raise TooLarge(
            f"messages: {parts} content parts in one request; the limit is {settings.max_request_parts}",
            field="messages",
        )


def _decoded_and_validated(body: bytes, field: Any, settings: Settings) -> Any:
    if field.field_info.annotation is AppendMessagesRequest:
        try:
            batch = read_batch(body, settings)
        except UnicodeDecodeError as error:
            raise not_utf8(error) from None
        except ValueError:
            raise HTTPException(400, UNPARSABLE) from None
        if batch is not None:
            return batch
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError:
        # What orjson refuses but Python's reader takes (an unpaired surrogate escape, NaN) is decoded as
        # FastAPI would, and what neither takes is refused as FastAPI refuses it.
        try:
            decoded = json.loads(body)
        except json.JSONDecodeError as error:
            raise not_json(error) from None
        except UnicodeDecodeError as error:
            raise not_utf8(error) from None
        except ValueError:
            raise HTTPException(400, UNPARSABLE) from None
        except RecursionError:
            raise too_deep() from None
    check_parts_budget(decoded, settings)
    value, errors = field.validate(decoded, {}, loc=("body",))
    if errors:
        raise RequestValidationError(errors, body=decoded)
    return value


def not_utf8(error: UnicodeDecodeError) -> BadRequest:
    """A body that is not UTF-8 (Windows PowerShell 5.1 sends a string body as ISO-8859-1 unless the
    Content-Type names a charset): said as such, naming the body, where FastAPI says only that it could not
    parse it."""
    return BadRequest(f"body: not UTF-8 (byte {error.start}); JSON is sent as UTF-8", field="body")


def _is_json(request: Request) -> bool:
    content_type = request.headers.get("content-type", "")
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")
