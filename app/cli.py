"""``projector serve``, ``projector migrate``, ``projector import`` and ``projector archive`` (also
``python -m app ...``)."""

import argparse
import asyncio
import os
import sys

import asyncpg
import uvicorn
from sqlalchemy.engine import make_url

from app import archive_command, import_command
from app.api.auth import ApiKeyConfigError, load_api_keys
from app.observability import configure_logging
from app.serving import head_deadline_protocol
from app.settings import InvalidSettings, Settings, get_settings
from app.store import migrations
from app.store.embedded import EmbeddedPostgres
from app.store.events import listen_dsn


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="projector", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="migrate, then serve the API")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    commands.add_parser("migrate", help="apply the migrations to DATABASE_URL (or the embedded database)")
    importing = commands.add_parser(
        "import",
        help="send session files to a running service (POST /sessions/import)",
        description=import_command.__doc__,
    )
    importing.add_argument("path", help="a session file, or a folder searched for the format's files")
    importing.add_argument("--format", required=True, choices=sorted(import_command.SUFFIXES))
    importing.add_argument("--strict", action="store_true", help="refuse a file with a line that cannot be read")
    importing.add_argument("--follow", action="store_true", help="keep importing one live file as it grows")
    importing.add_argument("--interval", type=float, default=1.0, help="seconds between looks at a followed file")
    archiving = commands.add_parser("archive", help="write a session's archive, for import --format projector")
    archiving.add_argument("session_id", help="the session to archive")
    archiving.add_argument("-o", "--output", help="the file to write (default: standard output)")
    for command in (importing, archiving):
        command.add_argument(
            "--url",
            default=os.environ.get("PROJECTOR_URL"),
            help="the service (default: $PROJECTOR_URL, else this machine's serve address)",
        )
        command.add_argument(
            "--key", default=os.environ.get("PROJECTOR_API_KEY"), help="an API key (default: $PROJECTOR_API_KEY)"
        )
    arguments = parser.parse_args(argv)
    settings = settings_or_exit()

    if arguments.command in ("import", "archive"):
        arguments.url = arguments.url or f"http://{settings.host}:{settings.port}"
        sys.exit((import_command if arguments.command == "import" else archive_command).run(arguments))

    if settings.database_url and (arguments.command == "migrate" or settings.migrate_on_start):
        database_or_exit(settings.database_url, settings.connect_timeout_seconds)
    if arguments.command == "migrate":
        if settings.database_url:
            migrations.upgrade(settings.database_url)
        else:
            embedded = EmbeddedPostgres(settings.data_dir)
            migrations.upgrade(embedded.ensure_database())
            embedded.stop()
        return
    keys_or_exit(settings)
    configure_logging(settings.log_level)
    uvicorn.run(
        "app.main:app",
        host=arguments.host or settings.host,
        port=arguments.port or settings.port,
        log_config=None,
        timeout_graceful_shutdown=30,
        http=head_deadline_protocol(settings.client_timeout_seconds),
    )


def settings_or_exit() -> Settings:
    """The settings, or the variables that are wrong, one a line, and exit status 2 (as for a bad argument)
    instead of a traceback."""
    try:
        return get_settings()
    except InvalidSettings as error:
        print(f"projector: invalid settings\n{error}", file=sys.stderr)
        sys.exit(2)


def keys_or_exit(settings: Settings) -> None:
    """The API keys read once before serving, so that a malformed list or a missing file is one line and exit
    status 2, as a bad setting is, rather than a traceback from inside the server."""
    try:
        load_api_keys(settings)
    except ApiKeyConfigError as error:
        print(f"projector: invalid settings\n{error}", file=sys.stderr)
        sys.exit(2)


def database_or_exit(url: str, timeout: float) -> None:
    """One connection before migrating: a database that cannot be reached is one line naming where it was
    looked for and exit status 3, rather than a migration's traceback (no password in it)."""

    async def connect() -> None:
        connection = await asyncpg.connect(listen_dsn(url), timeout=timeout)
        await connection.close()

    try:
        asyncio.run(connect())
    except (OSError, TimeoutError, ValueError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        where = make_url(url)
        host = f"{where.host}:{where.port or 5432}" if where.host else "the local socket"
        reason = str(error) if not isinstance(error, ValueError) else "the URL's parts are not ones the driver reads"
        print(
            f"projector: cannot reach the database at {host}/{where.database}: {reason or type(error).__name__}",
            file=sys.stderr,
        )
        sys.exit(3)
