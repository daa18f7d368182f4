"""Page sizes: one rule for every listing."""

from app.errors import InvalidInput
from app.settings import Settings


def page_limit(limit: int | None, settings: Settings) -> int:
    if limit is None:
        return settings.default_page_size
    if limit > settings.max_page_size:
        raise InvalidInput(f"limit: at most {settings.max_page_size}", field="limit")
    return limit
