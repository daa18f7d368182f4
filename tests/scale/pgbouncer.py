"""A PgBouncer in transaction mode on a loopback port, in front of the test server, for as long as a block runs.

It needs Debian's ``pgbouncer`` package (``.ci/run`` installs it). As root it runs as the embedded PostgreSQL
wheel's unprivileged system user, since PgBouncer refuses to run as root.
"""

import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import make_url

from tests.scale.streaming import as_unprivileged_user, free_port

EXECUTABLE = shutil.which("pgbouncer") or ("/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None)
MISSING = "Debian's pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)"


def version() -> tuple[int, int]:
    assert EXECUTABLE is not None
    output = subprocess.run([EXECUTABLE, "--version"], check=True, capture_output=True, text=True).stdout
    match = re.search(r"PgBouncer (\d+)\.(\d+)", output)
    assert match is not None, output
    return int(match.group(1)), int(match.group(2))


@contextmanager
def pgbouncer(server_url: str, *, pool_size: int) -> Iterator[str]:
    """Yields the URL of the pooler (same user and database as ``server_url``); ``pool_size`` server
    connections per database and user, shared by every client."""
    assert EXECUTABLE is not None, MISSING
    server = make_url(server_url)
    host = server.query.get("host") or server.host or "127.0.0.1"
    port = server.query.get("port") or server.port or 5432
    user = server.username or "postgres"
    folder = Path(tempfile.mkdtemp(prefix="projector-pgbouncer-"))
    listen_port = free_port()
    (folder / "userlist.txt").write_text(f'"{user}" ""\n')
    (folder / "pgbouncer.ini").write_text(
        f"""[databases]
* = host={host} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen_port}
unix_socket_dir =
auth_type = trust
auth_file = {folder / "userlist.txt"}
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 1000
query_wait_timeout = 20
logfile = {folder / "pgbouncer.log"}
"""
    )
    system_user = as_unprivileged_user(folder)
    if system_user is not None:
        for path in folder.iterdir():
            shutil.chown(path, system_user, system_user)
    process = subprocess.Popen(
        [EXECUTABLE, "-q", str(folder / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        user=system_user,
    )
    try:
        _wait_for_port(listen_port, process)
        yield server.set(host="127.0.0.1", port=listen_port, query={}).render_as_string(hide_password=False)
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"pgbouncer exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError("pgbouncer did not listen within 10 s")
