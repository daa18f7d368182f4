"""Asks an OpenAI-compatible model to write a compaction summary (``POST {base}/v1/chat/completions``).

One of the two modules in this package that do I/O. It either returns a usable summary or raises
``SummarizerError`` with a stable reason: unreachable, timeout, an error status, a body that is not a chat
completion, an empty answer, an answer cut at the token limit, or one outside the template. A failure must
mean that nothing is written, so there is no partial result and no fallback text.
"""

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx

from app.context.config import SummarizerConfig
from app.context.errors import SummarizerError
from app.context.model_server import chat_completions_url, http_timeout
from app.context.summary_prompt import (
    Transcript,
    build_summary_messages,
    clean_summary,
    has_template_heading,
)


@dataclass(frozen=True, slots=True)
class SummaryResult:
    text: str


class Summarizer:
    """Share one per process; give it the service's ``httpx.AsyncClient`` or call ``aclose``."""

    def __init__(self, config: SummarizerConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self._config = config
        self._client = client or httpx.AsyncClient()
        self._owns_client = client is None

    @property
    def model(self) -> str:
        return self._config.model

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    def request_body(
        self, transcript: Transcript, *, previous_summary: str | None, instructions: str | None
    ) -> dict[str, Any]:
        config = self._config
        return {
            "model": config.model,
            "messages": build_summary_messages(
                transcript,
                previous_summary=previous_summary,
                instructions=instructions,
                tool_result_chars=config.tool_result_chars,
            ),
            "max_tokens": config.max_output_tokens,
            "temperature": config.temperature,
            "stream": False,
        }

    async def summarize(
        self,
        transcript: Transcript,
        *,
        previous_summary: str | None = None,
        instructions: str | None = None,
    ) -> SummaryResult:
        body = self.request_body(transcript, previous_summary=previous_summary, instructions=instructions)
        answer = await self._post(body)
        return self._read(answer)

    async def _post(self, body: dict[str, Any]) -> Any:
        config = self._config
        url = chat_completions_url(config.server.base_url)
        headers = {"Accept": "application/json"}
        if config.server.api_key:
            headers["Authorization"] = f"Bearer {config.server.api_key}"
        try:
            async with asyncio.timeout(config.timeouts.total_seconds):
                response = await self._client.post(
                    url, json=body, headers=headers, timeout=http_timeout(config.timeouts)
                )
        except (TimeoutError, httpx.TimeoutException) as error:
            raise SummarizerError("timeout", f"the summariser at {url} did not answer in time") from error
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            raise SummarizerError(
                "unreachable", f"the summariser at {url} is unreachable ({type(error).__name__})"
            ) from error
        if response.status_code != 200:
            # The server's own words (vLLM: "This model's maximum context length is ...") say what to fix.
            said = " ".join(response.text.split())[:300]
            raise SummarizerError(
                "http_status", f"the summariser at {url} answered HTTP {response.status_code}: {said}"
            )
        try:
            return response.json()
        except ValueError as error:
            raise SummarizerError("bad_response", f"the summariser at {url} did not answer JSON") from error

    def _read(self, answer: Any) -> SummaryResult:
        try:
            choice = answer["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as error:
            raise SummarizerError("bad_response", "the summariser's answer has no choices[0].message") from error
        finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        if finish_reason == "length":
            raise SummarizerError(
                "truncated",
                f"the summary was cut at {self._config.max_output_tokens} tokens; raise the summariser's "
                "max_output_tokens or compact a shorter history",
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


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Some gateways answer with content parts even on Chat Completions.
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""
