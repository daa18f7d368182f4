"""Docker cannot run here, so the Dockerfile and compose file are kept correct by linting and reading them."""

import re
import subprocess
import sys
import tomllib
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


def test_the_image_probes_the_port_it_serves_and_lets_its_user_start_an_embedded_postgres() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    healthcheck = dockerfile.split("HEALTHCHECK", 1)[1].split("\nCMD", 1)[0]
    assert "PROJECTOR_PORT" in healthcheck and ":8000/" not in healthcheck
    assert re.search(r"install -d -o projector -g projector /srv/\.projector", dockerfile)


def test_compose_gives_a_stop_the_servers_grace_to_drain() -> None:
    service = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["projector"]
    assert int(service["stop_grace_period"].removesuffix("s")) > 30


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


def locked() -> dict[str, str]:
    """Name to pinned version, for every package in requirements.lock."""
    pins = re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", (ROOT / "requirements.lock").read_text(), re.M)
    return {name.lower().replace("_", "-"): version for name, version in pins}


def test_the_lock_pins_every_dependency_and_the_build_backend_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [re.split(r"[<>=!~\[; ]", requirement)[0].lower() for requirement in project["project"]["dependencies"]]
    pins = locked()
    assert [name for name in [*wanted, "setuptools"] if name not in pins] == []
    entries = re.split(r"^(?=[A-Za-z0-9._-]+==)", (ROOT / "requirements.lock").read_text(), flags=re.M)[1:]
    assert len(entries) == len(pins)
    assert [entry.split()[0] for entry in entries if "--hash=sha256:" not in entry] == []


def test_the_image_installs_only_from_the_lock_checking_hashes() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install --require-hashes --no-deps -r requirements.lock" in dockerfile
    assert "pip install --no-deps --no-build-isolation ." in dockerfile
    assert re.search(r"^COPY .*requirements\.lock", dockerfile, re.M)


def test_ci_audits_the_lock_for_known_vulnerabilities() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip-audit --disable-pip --no-deps --require-hashes -r requirements.lock" in ci
    assert "|| exit 1" in ci.split("pip-audit --disable-pip", 1)[1].splitlines()[0]
