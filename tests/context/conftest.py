from collections.abc import Iterator

import pytest

from tests.context.fake_model_server import FakeModelServer


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    with FakeModelServer(models={"qwen-coder": 32_768}) as server:
        yield server
