"""The house style is checked where CI runs: ruff's lint rules and its formatting, and mypy --strict on app/
(with the pydantic plugin), as pyproject.toml sets them."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).parent / "ruff"
CHECKED = ("app", "tests", "bench", "alembic")


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_code_is_ruff_clean(command: list[str]) -> None:
    result = subprocess.run([str(RUFF), *command, *CHECKED], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_app_is_mypy_strict_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "app"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
