"""Shared pieces of the arena tests: environments, database snapshots, a policy, ratings."""

import copy
import json
import math
import random
import threading

import pytest
from sqlalchemy import select

from vecenv.aisys.environment import RockPaperScissors
from vecenv.arena import client
from vecenv.arena.models import AgentRow, EnvironmentRow, RunRow

TICTACTOE = "vecenv.aisys.environment:TicTacToe"
RPS = "vecenv.aisys.environment:RockPaperScissors"
ROUNDS = 2  # actions in a run of SHORT_RPS
SHORT_RPS = {  # every round counting in the score
    "opponent": "rock",
    "configuration": {"episodeSteps": ROUNDS + 1, "tieRewardThreshold": 1},
}


class Failing(RockPaperScissors):
    """rps whose ``act`` fails on the action 2 (a plugin bug the arena must survive)."""

    def act(self, action, run_data):
        if action == 2:
            raise RuntimeError("a bug in the plugin")
        return super().act(action, run_data)


def snapshot(arena):
    """Every row of every table, as plain tuples (to compare before and after)."""
    tables = []
    with arena.Session() as session:
        for model in (EnvironmentRow, AgentRow, RunRow):
            columns = model.__table__.columns.keys()
            rows = session.scalars(select(model)).all()
            tables.append(sorted(tuple(getattr(r, c) for c in columns) for r in rows))
    return tables


def random_moves(seed=0):
    rng = random.Random(seed)
    return lambda percept: rng.choice(percept["legal"])


def answer(requests, policy):
    return [
        {"run": r["run"], "act_no": r["act_no"], "action": policy(r["percept"])} for r in requests
    ]


def request(config, actions=(), **extra):
    """A protocol-v1 request body of the agent ``config``."""
    return {"agent": config["agent"], "pwd": config["pwd"], "actions": list(actions), **extra}


def play_runs(arena, env, config, runs, policy, parallel=True):
    """Answer every action request in-process until ``runs`` runs finished: their outcomes, and
    the last answer."""
    finished = {}
    reply = arena.act(env, request(config, parallel_runs=parallel))
    while len(finished) < runs:
        actions = answer(reply["action_requests"], policy)
        reply = arena.act(env, request(config, actions, parallel_runs=parallel))
        finished.update(reply["finished_runs"])
    return finished, reply


class Player:
    """An agent's client (``client.play``) that keeps every action the arena acknowledged
    (answered with 200), and every outcome it was told of."""

    def __init__(self, config, policy):
        self.config, self.policy = config, policy
        self.acknowledged, self.finished = [], {}

    def play(self, runs=math.inf, stop=None):
        """Until ``runs`` outcomes were told, or the arena is gone (a ``ClientError``);
        ``stop(self)`` after every answer."""

        def record(actions, answer):
            self.acknowledged.extend(actions)
            self.finished.update(answer["finished_runs"])
            if stop is not None:
                stop(self)

        client.play(self.config, self.policy, runs, on_answer=record)
        return self


def assert_stored(arena, players):
    """Every action the players had acknowledged is in its run's history at its number, and
    every outcome they were told is their run's."""
    with arena.Session() as session:
        runs = {str(r.id): r for r in session.scalars(select(RunRow))}
    for player in players:
        for action in player.acknowledged:
            history = json.loads(runs[action["run"]].history)
            assert history[action["act_no"]][0] == action["action"], action
        for run, outcome in player.finished.items():
            assert runs[run].finished and json.loads(runs[run].outcome) == outcome


def run_together(tasks, timeout=300):
    """Run the callables in threads at once; fails on any error or one still running."""
    errors = []

    def run(task):
        try:
            task()
        except Exception as exc:  # reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=run, args=(task,)) for task in tasks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "not finished in time"
    assert not errors, errors


def assert_rps_runs_and_ratings(arena, min_runs):
    """Every run of SHORT_RPS in the database is right: as many actions as its state's steps
    (none applied twice), a finished run ROUNDS of them and the score they make as its outcome
    (or fewer and -1, abandoned); and every agent has at least ``min_runs`` finished and the
    ratings they make. The outcomes by agent name, in the order they finished."""
    settings = RockPaperScissors.settings
    with arena.Session() as session:
        agents = {a.id: a for a in session.scalars(select(AgentRow))}
        runs = session.scalars(select(RunRow).order_by(RunRow.finish_no)).all()
    outcomes = {a: [] for a in agents}
    for run in runs:
        history = json.loads(run.history)
        assert len(json.loads(run.state)["steps"]) == len(history)
        if not run.finished:
            assert json.loads(run.outcome) is None and len(history) < ROUNDS
            continue
        assert {extra for _, extra in history} <= {0}
        if len(history) < ROUNDS:  # abandoned
            assert json.loads(run.outcome) == -1
        else:
            assert len(history) == ROUNDS and json.loads(run.outcome) == rps_score(history)
        outcomes[run.agent_id].append(json.loads(run.outcome))
    for agent_id, agent in agents.items():
        assert agent.total_runs == len(outcomes[agent_id]) >= min_runs
        current, best, evaluated = expected_ratings(outcomes[agent_id], settings)
        assert agent.current_rating == pytest.approx(current)
        assert agent.best_rating == pytest.approx(best)
        assert agent.fully_evaluated == evaluated
    return {agents[a].name: values for a, values in outcomes.items()}


def rps_score(history):
    """The agent's score against the rock opponent: +1 for paper, -1 for scissors a round."""
    return sum((action == 1) - (action == 2) for action, _ in history)


def expected_ratings(outcomes, settings):
    """``(current, best, fully evaluated)`` after ``outcomes`` in order, by AISysProj's rule:
    the current rating is the mean of the last MIN_RUNS outcomes; the best one moves with it
    from INITIAL_RATING once MIN_RUNS runs are finished."""
    window = settings.MIN_RUNS_FOR_FULLY_EVALUATED
    current = best = settings.INITIAL_RATING
    pick = max if settings.RATING_OBJECTIVE == "max" else min
    for n in range(1, len(outcomes) + 1):
        recent = outcomes[max(0, n - window) : n]
        current = sum(recent) / len(recent)
        if n >= window:
            best = pick(best, current)
    return current, best, len(outcomes) >= window


class Unabandonable(RockPaperScissors):
    """rps whose runs cannot be abandoned."""

    settings = copy.copy(RockPaperScissors.settings)
    settings.CAN_ABANDON_RUNS = False


def rows_of(arena, name):
    """An agent's row and its runs, as plain values (to compare before and after)."""
    with arena.Session() as session:
        agent = session.scalars(select(AgentRow).where(AgentRow.name == name)).one()
        runs = session.scalars(select(RunRow).where(RunRow.agent_id == agent.id))
        agent_columns, run_columns = AgentRow.__table__.columns, RunRow.__table__.columns
        return (
            [getattr(agent, c.key) for c in agent_columns],
            sorted(tuple(getattr(r, c.key) for c in run_columns) for r in runs),
        )
