"""Asks an OpenAI-compatible model to write a compaction summary (``POST {base}/v1/chat/completions``).

One of the two modules in this package that do I/O. It either returns a usable summary or raises
``SummarizerError`` with a stable reason: unreachable, timeout, an error status, a body that is not a chat
completion, an empty answer, an answer cut at the token limit, one outside the template, or a window too
small for the history (no room beside the answer, or more parts than allowed). A failure must mean that
nothing is written, so there is no partial result and no fallback text.
"""

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from app.context.config import SummarizerConfig
from app.context.errors import SummarizerError
from app.context.model_server import chat_completions_url, http_timeout, shown
from app.context.summary_prompt import (
    Transcript,
    build_summary_messages,
    clean_summary,
    has_template_heading,
    take_part,
    transcript_blocks,
)

BYTES_PER_WINDOW_TOKEN = 3
"""How a window is read in bytes when fitting a request into it: stored text is estimated at four bytes a
token, and code and non-Latin text run denser, so the request must fit with room to spare."""
MESSAGE_OVERHEAD_BYTES = 64
"""What a chat message costs besides its text (role and template tokens), generously."""
MIN_PART_BYTES = 4_096
"""Below this much history a request, parts would be too small to summarise usefully."""
PART_ANSWER_WINDOW_SHARE = 4
"""A history in parts asks each request for at most a window over this many tokens (``max_tokens``): every
summary but the last is read again by the next request, so an answer allowed most of the window would leave
the next part no room; a quarter for the answer and as long a summary to update leave the rest for history."""
SUMMARY_BYTES_PER_TOKEN = 4
"""How long an answer of ``max_tokens`` tokens may be in bytes, when a part is budgeted before the summary it
updates is written: prose runs about four bytes a token, as stored text is estimated."""
MAX_SUMMARY_PARTS = 64
"""The most requests one summary may take. Each part can take the summariser's whole time while the caller
waits and the session stays leased, and each rewrite of the summary loses detail; a longer history is better
compacted in steps (``throughMessageId``), a lease and a request each."""


@dataclass(frozen=True, slots=True)
class SummaryResult:
    text: str
    calls: int = 1
    """Requests it took: more than one when the history did not fit the summariser's window at once."""


class Summarizer:
    """Share one per process; give it the service's ``httpx.AsyncClient`` or call ``aclose``."""

    def __init__(self, config: SummarizerConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self._config = config
        self._client = client or httpx.AsyncClient()
        self._owns_client = client is None

    @property
    def model(self) -> str:
        return self._config.model

    @property
    def config(self) -> SummarizerConfig:
        return self._config

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    def request_body(
        self, transcript: Transcript, *, previous_summary: str | None, instructions: str | None, max_tokens: int
    ) -> dict[str, Any]:
        """The chat completion request; ``max_tokens`` is the answer's room, which a request of a history in
        parts keeps smaller than ``max_output_tokens``."""
        config = self._config
        return {
            "model": config.model,
            "messages": build_summary_messages(
                transcript,
                previous_summary=previous_summary,
                instructions=instructions,
                tool_result_chars=config.tool_result_chars,
            ),
            "max_tokens": max_tokens,
            "temperature": config.temperature,
            "stream": False,
        }

    async def summarize(
        self,
        transcript: Transcript,
        *,
        previous_summary: str | None = None,
        instructions: str | None = None,
        window_tokens: int | None = None,
        before_next_part: Callable[[], Awaitable[None]] | None = None,
    ) -> SummaryResult:
        """The summary of ``transcript`` updating ``previous_summary``. With the summariser's ``window_tokens``
        known, a history too long for one request is summarised in parts, oldest first, each updating the
        summary the request before wrote; ``before_next_part`` is awaited between them (a lease to renew)."""
        max_tokens = self._config.max_output_tokens
        if window_tokens is not None:
            blocks = transcript_blocks(transcript, tool_result_chars=self._config.tool_result_chars)
            whole = self.part_bytes(
                window_tokens, previous_summary=previous_summary, instructions=instructions, max_tokens=max_tokens
            )
            transcript, taken = take_part(blocks, whole)
            if taken < len(blocks):
                return await self._summarize_in_parts(
                    blocks, previous_summary, instructions, window_tokens, before_next_part
                )
        body = self.request_body(
            transcript, previous_summary=previous_summary, instructions=instructions, max_tokens=max_tokens
        )
        return SummaryResult(self._read(await self._post(body), max_tokens).text)

    async def _summarize_in_parts(
        self,
        blocks: list[str],
        previous_summary: str | None,
        instructions: str | None,
        window_tokens: int,
        before_next_part: Callable[[], Awaitable[None]] | None,
    ) -> SummaryResult:
        """Each part is budgeted beside the summary it updates at its longest, and each answer kept to a
        quarter of the window, so that no summary a request may write leaves the next part without room."""
        max_tokens = self.part_max_tokens(window_tokens)
        at_cap = "x" * (max_tokens * SUMMARY_BYTES_PER_TOKEN)

        def room(summary: str | None) -> int:
            return self.part_bytes(
                window_tokens, previous_summary=summary, instructions=instructions, max_tokens=max_tokens
            )

        capped = room(at_cap)

        def limit(summary: str | None) -> int:
            """The part's room beside ``summary`` or, when that is shorter, beside a summary at its cap."""
            return min(room(summary), capped)

        needed = count_parts(blocks, limit(previous_summary), capped, MAX_SUMMARY_PARTS + 1)
        if needed > MAX_SUMMARY_PARTS:
            raise _too_many_parts(window_tokens)
        summary, calls = previous_summary, 0
        while blocks:
            if calls == MAX_SUMMARY_PARTS:
                # Only when the summaries came out longer than budgeted (denser than four bytes a token).
                raise _too_many_parts(window_tokens)
            if calls and before_next_part is not None:
                await before_next_part()
            part, taken = take_part(blocks, limit(summary))
            blocks = blocks[taken:]
            body = self.request_body(part, previous_summary=summary, instructions=instructions, max_tokens=max_tokens)
            summary, calls = self._read(await self._post(body), max_tokens).text, calls + 1
        assert summary is not None
        return SummaryResult(summary, calls)

    def part_max_tokens(self, window_tokens: int) -> int:
        """The ``max_tokens`` of each request of a history summarised in parts."""
        return min(self._config.max_output_tokens, window_tokens // PART_ANSWER_WINDOW_SHARE)

    def part_bytes(
        self, window_tokens: int, *, previous_summary: str | None, instructions: str | None, max_tokens: int
    ) -> int:
        """How much rendered history one request can hold beside the instructions, the summary it updates and
        the answer's room (``max_tokens``, which OpenAI-compatible servers add to the prompt and refuse past
        the window)."""
        framing = build_summary_messages("", previous_summary=previous_summary, instructions=instructions)
        fixed = sum(len(message["content"].encode("utf-8", "surrogatepass")) for message in framing)
        fixed += MESSAGE_OVERHEAD_BYTES * len(framing)
        answer = max_tokens * BYTES_PER_WINDOW_TOKEN
        room = window_tokens * BYTES_PER_WINDOW_TOKEN - fixed - answer
        if room < MIN_PART_BYTES:
            raise SummarizerError(
                "window_too_small",
                f"the summariser's window of {window_tokens} tokens leaves too little room for history beside "
                f"its answer ({max_tokens} tokens) and the summary it updates",
            )
        return room

    async def _post(self, body: dict[str, Any]) -> Any:
        config = self._config
        url = chat_completions_url(config.server.base_url)
        named = shown(url)
        headers = {"Accept": "application/json"}
        if config.server.api_key:
            headers["Authorization"] = f"Bearer {config.server.api_key}"
        try:
            async with asyncio.timeout(config.timeouts.total_seconds):
                response = await self._client.post(
                    url, json=body, headers=headers, timeout=http_timeout(config.timeouts)
                )
        except (TimeoutError, httpx.TimeoutException) as error:
            raise SummarizerError("timeout", f"the summariser at {named} did not answer in time") from error
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            raise SummarizerError(
                "unreachable", f"the summariser at {named} is unreachable ({type(error).__name__})"
            ) from error
        if response.status_code != 200:
            # The server's own words (vLLM: "This model's maximum context length is ...") say what to fix.
            said = " ".join(response.text.split())[:300]
            raise SummarizerError(
                "http_status", f"the summariser at {named} answered HTTP {response.status_code}: {said}"
            )
        try:
            return response.json()
        except ValueError as error:
            raise SummarizerError("bad_response", f"the summariser at {named} did not answer JSON") from error

    def _read(self, answer: Any, max_tokens: int) -> SummaryResult:
        try:
            choice = answer["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as error:
            raise SummarizerError("bad_response", "the summariser's answer has no choices[0].message") from error
        finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        if finish_reason == "length":
            raise SummarizerError(
                "truncated",
                f"the summary was cut at {max_tokens} tokens; raise the summariser's max_output_tokens (or its "
                "window, when the history goes in parts) or compact a shorter history",
            )
        if finish_reason not in (None, "stop", "eos", "end_turn"):
            raise SummarizerError("bad_response", f"the summariser stopped with {finish_reason!r}")
        text = clean_summary(_text_of(message.get("content") if isinstance(message, dict) else None))
        if not text:
            raise SummarizerError("empty_summary", "the summariser answered with an empty summary")
        if self._config.require_template_headings and not has_template_heading(text):
            raise SummarizerError(
                "off_template",
                "the summariser's answer has none of the template's headings; it is likely not a summary",
            )
        return SummaryResult(text)


def count_parts(blocks: Sequence[str], first_part_bytes: int, part_bytes: int, stop_at: int) -> int:
    """How many parts ``blocks`` take when the first holds ``first_part_bytes`` and each after it
    ``part_bytes``, counted no further than ``stop_at``: known before any request is sent."""
    parts, start = 0, 0
    while start < len(blocks) and parts < stop_at:
        _, taken = take_part(blocks[start:], first_part_bytes if parts == 0 else part_bytes)
        start += taken
        parts += 1
    return parts


def _too_many_parts(window_tokens: int) -> SummarizerError:
    return SummarizerError(
        "too_many_parts",
        f"the history would take more than {MAX_SUMMARY_PARTS} requests to the summariser's window of "
        f"{window_tokens} tokens; compact in steps with throughMessageId",
    )


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Some gateways answer with content parts even on Chat Completions.
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""
