from collections.abc import Callable
from typing import Any

import pytest

from tests.providers.ai_sdk_preflight import ensure_installed, preflight


@pytest.fixture(scope="session")
def ai_sdk_preflight() -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    ensure_installed()
    return preflight
