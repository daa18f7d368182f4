"""The house style is checked where CI runs: ruff's lint rules and its formatting, and mypy --strict on app/,
bench/ and tests/ (with the pydantic plugin), as pyproject.toml sets them; and the layering the folders promise."""

import ast
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


def test_app_bench_and_tests_are_mypy_strict_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "app", "bench", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


ROUTE_BODY_LINES = 25
"""A route parses, calls one service function and answers: more than this is orchestration in the wrong layer."""
LAYER_IMPORTS = {
    "app/services": ("app.api",),
    "app/store": ("app.api", "app.services"),
    "app/engine": ("app.api", "app.services", "app.store"),
    "app/projections": ("app.api", "app.services", "app.store"),
    "app/providers": ("app.api", "app.services", "app.store"),
    "app/context": ("app.api", "app.services", "app.store"),
}
"""What each layer must never import: the core knows no I/O layer, the services know no wire."""


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


@pytest.mark.parametrize("layer", sorted(LAYER_IMPORTS))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    forbidden = LAYER_IMPORTS[layer]
    found = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in (ROOT / layer).rglob("*.py")
        for module in imported_modules(path)
        if module.startswith(forbidden)
    }
    assert not found, sorted(found)


def test_routes_are_short() -> None:
    long_routes = []
    for path in (ROOT / "app/api/routes").glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.AsyncFunctionDef):
                continue
            is_route = any(
                isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                for decorator in node.decorator_list
            )
            if is_route and node.end_lineno is not None and node.end_lineno - node.body[0].lineno >= ROUTE_BODY_LINES:
                long_routes.append(f"{path.name}:{node.name}")
    assert not long_routes


def test_nothing_imports_a_private_module_of_another_package() -> None:
    """A library's underscored modules may move in any release: only its public API is imported."""
    private = {
        f"{path.relative_to(ROOT)}: {module}"
        for folder in CHECKED
        for path in (ROOT / folder).rglob("*.py")
        for module in imported_modules(path)
        if not module.startswith(("app.", "tests.", "bench."))
        and any(part.startswith("_") and part != "__future__" for part in module.split("."))
    }
    assert not private, sorted(private)
