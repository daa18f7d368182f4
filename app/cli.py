"""``projector serve`` and ``projector migrate`` (also ``python -m app ...``)."""

import argparse

import uvicorn

from app.observability import configure_logging
from app.settings import get_settings
from app.store import migrations
from app.store.embedded import EmbeddedPostgres


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="projector", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="migrate, then serve the API")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    commands.add_parser("migrate", help="apply the migrations to DATABASE_URL (or the embedded database)")
    arguments = parser.parse_args(argv)
    settings = get_settings()

    if arguments.command == "migrate":
        if settings.database_url:
            migrations.upgrade(settings.database_url)
        else:
            embedded = EmbeddedPostgres(settings.data_dir)
            migrations.upgrade(embedded.ensure_database())
            embedded.stop()
        return
    configure_logging(settings.log_level)
    uvicorn.run(
        "app.main:app",
        host=arguments.host or settings.host,
        port=arguments.port or settings.port,
        log_config=None,
        timeout_graceful_shutdown=30,
    )
