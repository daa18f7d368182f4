import pytest

from tests.providers.ai_sdk_preflight import Preflight, ensure_installed, preflight


@pytest.fixture(scope="session")
def ai_sdk_preflight() -> Preflight:
    ensure_installed()
    return preflight
