# syntax=docker/dockerfile:1
FROM python:3.12-slim AS build
WORKDIR /srv
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# Every dependency (and the build backend) from the lock, each file checked against its hash; then the
# service itself, with no dependency resolution and no build isolation left to fetch anything unpinned.
COPY pyproject.toml README.md requirements.lock ./
COPY app ./app
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --require-hashes --no-deps -r requirements.lock \
 && /opt/venv/bin/pip install --no-deps --no-build-isolation .

FROM python:3.12-slim
# Without DATABASE_URL the service starts an embedded PostgreSQL in ./.projector, which the service's own
# user must be able to create (PostgreSQL refuses to run as root).
RUN useradd --system --uid 10001 --home /srv projector \
 && install -d -o projector -g projector /srv/.projector
WORKDIR /srv
COPY --from=build /opt/venv /opt/venv
COPY alembic.ini ./
COPY alembic ./alembic
COPY app ./app
ENV PATH="/opt/venv/bin:$PATH" \
    PYTHONUNBUFFERED=1 \
    PROJECTOR_HOST=0.0.0.0 \
    PROJECTOR_PORT=8000
USER 10001
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os,sys,urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('PROJECTOR_PORT', '8000'), timeout=2).status != 200)"]
CMD ["python", "-m", "app", "serve"]
