"""A throwaway PostgreSQL server for the arena's tests: ``initdb`` into a temporary folder, started
on a free port of 127.0.0.1, removed at the end.

PostgreSQL refuses to run as root, so as root (in CI) its programs run as the ``postgres`` user that
Debian's package makes. Without PostgreSQL's programs or psycopg the tests skip, except under CI,
where they fail (``.ci/run`` installs Debian's ``postgresql``).
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile

import pytest


def _program(name):
    found = shutil.which(name) or sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found if isinstance(found, str) else (found[-1] if found else None)


def _require():
    reason = None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        reason = "psycopg is not installed (pip install 'psycopg[binary]')"
    if reason is None and not (_program("initdb") and _program("pg_ctl")):
        reason = "PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql)"
    if reason is None and os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            reason = "running as root without a postgres user to run PostgreSQL as"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the PostgreSQL tests must run in CI: {reason}")
        pytest.skip(reason)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    def __init__(self, folder):
        self.folder = folder
        self.data = os.path.join(folder, "data")
        self.port = _free_port()
        self.as_user = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(folder, user.pw_uid, user.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *command):
        done = subprocess.run(
            self.as_user + list(command), capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stdout[-1000:]} {done.stderr[-1000:]}")

    def start(self):
        self._run(_program("initdb"), "-D", self.data, "-U", "arena", "--auth=trust", "-E", "UTF8")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = os.path.join(self.folder, "log")
        self._run(_program("pg_ctl"), "-D", self.data, "-o", options, "-l", log, "-w", "start")
        return f"postgresql+psycopg://arena@127.0.0.1:{self.port}/postgres"

    def stop(self):
        self._run(_program("pg_ctl"), "-D", self.data, "-m", "immediate", "stop")


@pytest.fixture
def postgres_url():
    """The SQLAlchemy URL of a fresh PostgreSQL database."""
    _require()
    folder = tempfile.mkdtemp(prefix="vecenv-arena-pg-")  # one the postgres user can reach
    server = Postgres(folder)
    try:
        yield server.start()
        server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
