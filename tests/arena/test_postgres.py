"""The arena on PostgreSQL: two server processes on one database, each agent played by two clients
at once, one on each server. Requests of one agent are serialised by its locked row, so no
acknowledged action is lost and no run is played twice from the same point."""

import functools

from vecenv.arena import Arena
from vecenv.arena.launch import ServerProcess

from .helpers import (
    RPS,
    SHORT_RPS,
    Player,
    assert_rps_runs_and_ratings,
    assert_stored,
    random_moves,
    run_together,
)

AGENTS = 4
RUNS = 15  # per client


def test_two_servers_on_postgres_lose_nothing(postgres_url):
    arena = Arena(postgres_url)
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    configs = [arena.add_agent("rps", f"agent{k}") for k in range(AGENTS)]
    servers = [ServerProcess(postgres_url), ServerProcess(postgres_url)]
    try:
        for server in servers:
            server.start()
        players = [
            Player(dict(config, url=server.url), random_moves(10 * k + s))
            for k, config in enumerate(configs)
            for s, server in enumerate(servers)
        ]
        run_together([functools.partial(player.play, RUNS) for player in players])
    finally:
        for server in servers:
            server.stop()

    assert_stored(arena, players)
    assert_rps_runs_and_ratings(arena, RUNS)
    arena.close()
