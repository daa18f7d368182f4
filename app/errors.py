"""The one error family. Any layer may raise a ``ProjectorError``; the HTTP layer renders it as RFC 9457
problem+json with a stable ``type``, so clients can branch on the type instead of parsing prose."""

from typing import Any, ClassVar

PROBLEM_BASE = "https://projector.dev/problems/"


class ProjectorError(Exception):
    status: ClassVar[int] = 500
    slug: ClassVar[str] = "internal-error"
    title: ClassVar[str] = "Internal server error"
    retry_after: ClassVar[int | None] = None
    """Seconds after which the same request may succeed, sent as ``Retry-After``: the answer says "not now",
    not what the request did, so it is never kept under an ``Idempotency-Key``."""

    def __init__(self, detail: str, **extensions: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extensions = extensions

    @property
    def type(self) -> str:
        return PROBLEM_BASE + self.slug


class BadRequest(ProjectorError):
    status, slug, title = 400, "bad-request", "Bad request"


class InvalidCursor(ProjectorError):
    status, slug, title = 400, "invalid-cursor", "Invalid cursor"


class Unauthorized(ProjectorError):
    status, slug, title = 401, "unauthorized", "Missing or invalid API key"


class Forbidden(ProjectorError):
    status, slug, title = 403, "forbidden", "Not allowed for this key"


class NotFound(ProjectorError):
    status, slug, title = 404, "not-found", "Not found"


class Conflict(ProjectorError):
    status, slug, title = 409, "conflict", "Conflict"


class MessageConflict(Conflict):
    slug, title = "message-conflict", "A message with this id exists with different content"


class TooLarge(ProjectorError):
    status, slug, title = 413, "too-large", "Content too large"


class UnsupportedMediaType(ProjectorError):
    status, slug, title = 415, "unsupported-media-type", "Unsupported media type"


class InvalidInput(ProjectorError):
    status, slug, title = 422, "validation-error", "Invalid input"


class TooManyRequests(ProjectorError):
    status, slug, title = 429, "too-many-requests", "Too many requests"


class TooManyOpenStreams(TooManyRequests):
    slug, title = "too-many-open-streams", "Too many streamed answers open for this caller"


class RequestHeadersTooLarge(ProjectorError):
    status, slug, title = 431, "headers-too-large", "Request header fields too large"


class ServiceUnavailable(ProjectorError):
    status, slug, title = 503, "unavailable", "Service unavailable"
    retry_after = 1


class CompactionRefused(ProjectorError):
    status, slug, title = 422, "compaction-refused", "Compaction refused"


class CompactionRunning(Conflict):
    slug, title = "compaction-running", "A compaction of this session is already running"
    retry_after = 5
    """A summary takes seconds to minutes; a lease its process could not end runs out within half a minute."""


class CompactionStale(Conflict):
    slug, title = "compaction-stale", "The history changed while the compaction was summarising it"
    retry_after = 1
    """Nothing was written: the same request, sent again, summarises the history as it now is."""


class SummarizerFailed(ProjectorError):
    status, slug, title = 502, "summarizer-failed", "The summarizer gave no usable summary"
