"""The command line's HTTP client of a running service: by URL and key, so the service stays the one writer and
every check, limit and wall applies to what a command sends or reads."""

import httpx

TIMEOUT_SECONDS = 300.0
"""A file of tens of megabytes takes a while to parse and store, or to stream."""


def service_client(url: str, key: str | None) -> httpx.Client:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=url, headers=headers, timeout=TIMEOUT_SECONDS)


def problem_detail(response: httpx.Response) -> str:
    """What a refusal says (its problem+json ``detail``), or the start of whatever else it answered."""
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text[:300]
