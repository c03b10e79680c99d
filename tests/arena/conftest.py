"""Arena fixtures: a database with its ``Arena``, and real servers on 127.0.0.1."""

import pytest

from vecenv.arena import Arena
from vecenv.arena.launch import ServerProcess

from .postgres import postgres_url  # noqa: F401  (a fixture)


@pytest.fixture
def arena_db(tmp_path):
    """A database path and the ``Arena`` on it (for setting up and checking)."""
    path = str(tmp_path / "arena.sqlite")
    arena = Arena(path)
    yield path, arena
    arena.close()


@pytest.fixture
def start_server():
    """``start_server(db)`` starts ``vecenv arena serve`` on ``db``; each is stopped at the end."""
    servers = []

    def start(db):
        server = ServerProcess(db)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()
