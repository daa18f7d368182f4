import shutil
from pathlib import Path

import pytest

from tests.providers import ai_sdk_preflight
from tests.providers.ai_sdk_preflight import Preflight


def test_a_machine_without_npm_fails_with_a_clear_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ai_sdk_preflight, "TOOLS", tmp_path)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(pytest.fail.Exception, match=r"needs Node\.js and npm"):
        ai_sdk_preflight.ensure_installed()


def test_the_preflight_accepts_a_valid_payload_and_names_the_sdk_error_otherwise(ai_sdk_preflight: Preflight) -> None:
    good = {"model": "m", "system": "s", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    in_messages = {"model": "m", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}
    extra = {**good, "temperature": 1}
    results = ai_sdk_preflight([good, in_messages, extra])
    assert results[0] == {"ok": True}
    assert "System messages are not allowed" in results[1]["message"]
    assert "unexpected payload keys: temperature" in results[2]["message"]
