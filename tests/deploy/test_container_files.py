"""Docker cannot run here, so the Dockerfile and compose file are kept correct by linting and reading them."""

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
HADOLINT = Path(sys.executable).parent / "hadolint"


def test_dockerfile_passes_hadolint() -> None:
    result = subprocess.run([str(HADOLINT), str(ROOT / "Dockerfile")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_runs_the_service_as_a_non_root_user_with_a_readiness_healthcheck() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^USER (?!root|0\b)\S+", dockerfile, re.M)
    assert "HEALTHCHECK" in dockerfile and "/readyz" in dockerfile
    assert 'CMD ["python", "-m", "app", "serve"]' in dockerfile
    for needed in ("alembic.ini", "alembic", "app"):
        assert re.search(rf"^COPY {needed} ", dockerfile, re.M), needed


def test_compose_runs_the_service_against_a_healthy_postgres_16_or_newer() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    postgres = compose["services"]["postgres"]
    version = int(postgres["image"].split(":")[1].split(".")[0].split("-")[0])
    assert version >= 16
    assert postgres["healthcheck"]["test"]
    service = compose["services"]["projector"]
    assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert service["environment"]["DATABASE_URL"].startswith("postgresql+asyncpg://")
    assert "@postgres:5432/" in service["environment"]["DATABASE_URL"]
    assert service["build"] == "."
