"""The arena on PostgreSQL: two server processes on one database, each agent played by two clients
at once, one on each server. Requests of one agent are serialised by its locked row, so no
acknowledged action is lost and no run is played twice from the same point."""

import json
import threading

import pytest
from sqlalchemy import select

from vecenv.arena import Arena
from vecenv.arena.arena import load_class
from vecenv.arena.launch import ServerProcess
from vecenv.arena.models import AgentRow, RunRow

from .helpers import (
    ROUNDS,
    RPS,
    SHORT_RPS,
    Player,
    assert_stored,
    expected_ratings,
    random_moves,
    rps_score,
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
        errors = []

        def play(player):
            try:
                player.play(RUNS)
            except Exception as exc:  # reported below
                errors.append(repr(exc))

        threads = [threading.Thread(target=play, args=(p,)) for p in players]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not any(t.is_alive() for t in threads) and not errors
    finally:
        for server in servers:
            server.stop()

    assert_stored(arena, players)
    settings = load_class(RPS).settings
    with arena.Session() as session:
        agents = {a.id: a for a in session.scalars(select(AgentRow))}
        runs = session.scalars(select(RunRow).order_by(RunRow.finish_no)).all()
    outcomes = {a: [] for a in agents}
    for run in runs:
        history = json.loads(run.history)
        state_steps = json.loads(run.state)["steps"]
        assert len(state_steps) == len(history)  # one action a step, none played twice
        if run.finished:
            assert len(history) == ROUNDS and json.loads(run.outcome) == rps_score(history)
            outcomes[run.agent_id].append(json.loads(run.outcome))
    for agent_id, agent in agents.items():
        assert agent.total_runs == len(outcomes[agent_id]) >= RUNS
        current, best, evaluated = expected_ratings(outcomes[agent_id], settings)
        assert agent.current_rating == pytest.approx(current)
        assert agent.best_rating == pytest.approx(best)
        assert agent.fully_evaluated == evaluated
    arena.close()
