"""The AI SDK's own pre-flight (tools/check-ai-sdk.mjs) called from Python, one Node process per batch.

``npm`` installs the pinned ``ai`` package into tools/node_modules when it is missing. A machine without
Node or npm fails the tests that need it with a message saying so: the ai-sdk target is never left unchecked.
"""

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
SCRIPT = "check-ai-sdk.mjs"

Preflight = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
"""``preflight``, as the ``ai_sdk_preflight`` fixture hands it to a test."""


def ensure_installed() -> None:
    if (TOOLS / "node_modules" / "ai" / "package.json").exists():
        return
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.fail(
            "the ai-sdk payload check needs Node.js and npm on PATH (it runs the `ai` package's own pre-flight); "
            "install Node 20+ with npm, then rerun",
            pytrace=False,
        )
    command = [npm, "ci" if (TOOLS / "package-lock.json").exists() else "install", "--no-audit", "--no-fund"]
    done = subprocess.run(command, cwd=TOOLS, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        pytest.fail(f"`{' '.join(command)}` in {TOOLS} failed:\n{done.stderr[-2000:]}", pytrace=False)


def preflight(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One result ``{ok, name?, message?, issues?}`` per payload, in order."""
    if not payloads:
        return []
    done = subprocess.run(
        [shutil.which("node") or "node", SCRIPT],
        cwd=TOOLS,
        input=json.dumps(payloads),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0 or not done.stdout:
        raise AssertionError(f"{SCRIPT} crashed:\n{done.stderr[-2000:]}")
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results
