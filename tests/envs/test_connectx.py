"""ConnectX against kaggle-environments' connectx: the rules step by step (invalid moves, flagged
agents, the episodeSteps limit), the negamax and random agents, the renderers; and random input.

Each board shape is its own state record type (the board has ``rows * columns`` cells, the
heights one per column), so the engine compiles its drivers once per ``(rows, columns)``, a few
seconds each: the random-input tests draw their shapes among those the other tests here already
compiled, plus the largest, 8 x 8 (64 cells). The agents compile once for every
size, so they are checked on every shape from 1 x 1 to 8 x 8.
"""

import importlib
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.kaggle.reference import kaggle
from tests.kaggle.reference import make as kaggle_make
from vecenv.envs.connectx import agents, render, rules
from vecenv.kernels.agents import AGENT_RNG
from vecenv.kernels.rng import seed_word
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    ERROR,
    FAILED_REWARD,
    INACTIVE,
    INVALID,
    STATUS_NAMES,
    TIMEOUT,
)

FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

SIZES = [
    dict(rows=6, columns=7, inarow=4),
    dict(rows=5, columns=4, inarow=3),
    dict(rows=1, columns=1, inarow=1),
    dict(rows=3, columns=8, inarow=3),
    dict(rows=4, columns=4, inarow=5),  # never winnable: every game is a draw or invalid
    dict(rows=7, columns=9, inarow=5),
]
# Shapes whose record types the tests before the random-input ones compile: the side-by-side
# games (SIZES, test_full_columns_and_full_board's among them) and the positions of the
# agents' tests (AGENT_SIZES, BIT_SIZES); and 8 x 8, the largest (64 cells, past the bitboards).
# Each shape is a record type whose drivers compile apart (about 5 s): the tests vary inarow and
# the positions within these few shapes rather than adding shapes.
SHAPES = [(1, 1), (4, 4), (5, 4), (3, 8), (6, 7), (7, 9)]
SHAPES += [(4, 5), (7, 8), (8, 8)]
# The other test files that play boards of their own choose them from SHAPES too (Kaggle's face,
# the ANSI renders, AISysProj's face): a shape's drivers compile once a run, whichever file meets
# it first, the rest load them from the cache.


def size_id(config):
    return "{rows}x{columns}/{inarow}".format(**config)


def make_engine(num_envs=1, seed=0, **config):
    return vecenv.make("connectx", num_envs=num_envs, seed=seed, autoreset="disabled", **config)


def kaggle_outcomes(env):
    """Each agent's reward as the engine counts it: Kaggle's, or -1 where Kaggle's is None."""
    return [FAILED_REWARD if a.reward is None else float(a.reward) for a in env.state]


def record_outcomes(record):
    return [
        FAILED_REWARD if code in (ERROR, INVALID, TIMEOUT) else float(reward)
        for code, reward in zip(record["status"].tolist(), record["reward"].tolist(), strict=True)
    ]


def top_open(board, columns):
    return np.asarray(board[:columns]) == 0


# -- the rules beside Kaggle's -----------------------------------------------------------------


class SideBySide:
    """One Kaggle connectx env and one episode of ours, stepped with the same moves.

    Actions are Kaggle's: per agent an int (any, even off the board) or an exception (the agent
    raised: ERROR; ``DeadlineExceeded``: TIMEOUT). Ours takes what the Kaggle face makes of them:
    an exception, a negative column, or the mover's column off the board marks that agent
    (ERROR, TIMEOUT, INVALID) in the record before the step; the idle agent's column is ignored,
    so off the board it steps as 0. The face's rewards for the step are the engine's plus the
    change of the outcomes its marks made, which the engine's step no longer sees."""

    def __init__(self, config):
        self.config = config
        self.columns = config["columns"]
        self.env = kaggle_make("connectx", config)
        self.env.reset()
        self.engine = make_engine(**config)
        self.check([0.0, 0.0])

    @property
    def mover(self):
        return 0 if self.env.state[0].status == "ACTIVE" else 1

    @property
    def board(self):
        return list(self.env.state[0].observation.board)

    def step(self, actions):
        deadline = kaggle().errors.DeadlineExceeded
        before = kaggle_outcomes(self.env)
        record = self.engine.get_state(0)
        flagged = record_outcomes(record)
        ours = [0, 0]
        mover = self.mover
        for k, action in enumerate(actions):
            if isinstance(action, deadline):
                record["status"][k] = TIMEOUT
            elif isinstance(action, BaseException):
                record["status"][k] = ERROR
            elif action < 0 or (k == mover and action >= self.columns):
                record["status"][k] = INVALID
            elif action < self.columns:
                ours[k] = action
        if (record["status"] != self.engine.states["status"][0]).any():
            self.engine.set_state(record, 0)
        face = np.array(record_outcomes(record)) - np.array(flagged)
        self.env.step(list(actions))
        self.engine.step(np.array([ours], dtype=np.int64))
        after = kaggle_outcomes(self.env)
        self.check(np.array(after) - np.array(before), face)

    def check(self, expected_rewards, face=(0.0, 0.0)):
        env, engine = self.env, self.engine
        record = engine.states[0]
        board = self.board
        np.testing.assert_array_equal(engine.obs["board"][0], board)
        assert [STATUS_NAMES[c] for c in record["status"]] == [a.status for a in env.state]
        for k, agent in enumerate(env.state):
            failed = record["status"][k] in (ERROR, INVALID, TIMEOUT)
            assert (agent.reward is None) == failed
            if not failed:
                assert record["reward"][k] == agent.reward
        assert bool(engine.terminated[0]) == env.done
        np.testing.assert_array_equal(engine.rewards[0] + np.asarray(face), expected_rewards)
        assert record["step"] == env.state[0].observation.step
        np.testing.assert_array_equal(engine.obs["mark"][0], [1, 2])
        legal = top_open(board, self.columns) & (not env.done)
        np.testing.assert_array_equal(engine.obs["legal"][0], legal)
        assert engine.render(0, mode="ansi") == env.render(mode="ansi")


def random_column(rng, board, columns):
    """Mostly an open column; one time in ten a full one where there is one, one time in ten
    any column."""
    u = rng.random()
    full = np.flatnonzero(~top_open(board, columns))
    if u < 0.1 and len(full):
        return int(rng.choice(full))
    if u < 0.2:
        return int(rng.integers(columns))
    return int(rng.choice(np.flatnonzero(top_open(board, columns))))


def play_random_game(config, rng):
    """A random game side by side; returns how it ended."""
    game = SideBySide(config)
    while not game.env.done:
        actions = [0, 0]
        actions[game.mover] = random_column(rng, game.board, game.columns)
        game.step(actions)
    statuses = [a.status for a in game.env.state]
    rewards = [a.reward for a in game.env.state]
    if "INVALID" in statuses:
        return "invalid"
    return "win" if rewards[0] != 0 else "draw"


@pytest.mark.parametrize("config", SIZES, ids=size_id)
def test_random_games_match_kaggle(config):
    rng = np.random.default_rng(config["rows"] * 100 + config["columns"])
    ends = [play_random_game(config, rng) for _ in range(12)]
    assert "invalid" in ends or config["columns"] == 1
    if config["inarow"] > max(config["rows"], config["columns"]):
        assert "win" not in ends and "draw" in ends
    else:
        assert "win" in ends


def test_full_columns_and_full_board():
    # 4 x 4, inarow 5 (never won): four moves fill a column and a fifth into it is invalid;
    # sixteen fill the board, a draw.
    game = SideBySide(dict(rows=4, columns=4, inarow=5))
    for _ in range(2):
        game.step([0, 0])  # agent 0's move into column 0
        game.step([0, 0])  # agent 1's
    game.step([0, 0])  # agent 0 plays the full column 0
    assert [a.status for a in game.env.state] == ["INVALID", "DONE"]
    game = SideBySide(dict(rows=4, columns=4, inarow=5))
    for column in range(4):
        for _ in range(4):
            assert not game.env.done
            game.step([column, column])
    assert [a.status for a in game.env.state] == ["DONE", "DONE"]
    assert [a.reward for a in game.env.state] == [0, 0]


@pytest.mark.parametrize("column", [-1, 7, 8, 100])
def test_off_board_columns_are_refused_by_the_engine(column):
    engine = make_engine()
    engine.step(np.array([[3, 0]]))
    before = engine.get_state()
    obs = {k: v.copy() for k, v in engine.obs.items()}
    for actions in ([0, column], [column, 0]):
        with pytest.raises(ValueError):
            engine.step(np.array([actions]))
        np.testing.assert_array_equal(engine.get_state(), before)
        for name, values in obs.items():
            np.testing.assert_array_equal(engine.obs[name], values)


@pytest.mark.parametrize(
    ("moves", "done"),
    [
        ([[7, 0]], True),  # the mover off the board: INVALID
        ([[3, 0], [0, 99]], True),
        ([[3, 0], [0, -1]], True),
        ([[-1, 0]], True),  # a negative column fails Kaggle's action schema
        ([[3, 99]], False),  # the idle agent's column is ignored, even off the board
        ([[3, 99], [2, 0], [0, 7]], False),
        ([[3, -1]], True),  # but a negative one is an invalid action: the mover is DONE
        ([[3, 0], [-5, 2]], True),
    ],
)
def test_off_board_columns_as_the_kaggle_face_maps_them(moves, done):
    game = SideBySide(dict(rows=6, columns=7, inarow=4))
    for actions in moves:
        assert not game.env.done
        game.step(actions)
    assert game.env.done == done


@pytest.mark.parametrize("episode_steps", [1, 2, 5, 8])
def test_episode_steps_limit_matches_kaggle(episode_steps):
    rng = np.random.default_rng(episode_steps)
    for _ in range(4):
        game = SideBySide(dict(rows=6, columns=7, inarow=4, episodeSteps=episode_steps))
        while not game.env.done:
            actions = [0, 0]
            actions[game.mover] = int(rng.choice(np.flatnonzero(top_open(game.board, 7))))
            game.step(actions)
        assert game.env.state[0].observation.step == max(episode_steps - 1, 1)
        assert [a.status for a in game.env.state] == ["DONE", "DONE"]


@pytest.mark.parametrize("failure", ["error", "timeout"])
@pytest.mark.parametrize("agent", [0, 1])
@pytest.mark.parametrize("after", [0, 1, 4])
def test_flagged_agents_match_kaggle(failure, agent, after):
    error = ValueError("x") if failure == "error" else kaggle().errors.DeadlineExceeded("late")
    game = SideBySide(dict(rows=6, columns=7, inarow=4))
    for k in range(after):
        actions = [0, 0]
        actions[game.mover] = k % 7
        game.step(actions)
    mover = game.mover
    actions = [0, 0]
    actions[agent] = error
    actions[1 - agent] = 2 if agent != mover else 0
    game.step(actions)
    assert game.env.done
    assert game.env.state[agent].status == failure.upper()
    assert game.env.state[1 - agent].status == "DONE"
    assert game.engine.rewards[0, agent] == 0.0  # the face reports the -1, not the engine


# -- the agents --------------------------------------------------------------------------------


def kaggle_connectx():
    kaggle()
    return importlib.import_module("kaggle_environments.envs.connectx.connectx")


def positions(config, count, seed):
    """``count`` random positions reached by play, the game still running: (board, mark)."""
    size = config["rows"] * config["columns"]
    engine = make_engine(num_envs=count, seed=seed, **config)
    rng = np.random.default_rng(seed)
    stop = rng.integers(0, size, count)
    found = {}
    for step in range(size + 1):
        for i in range(count):
            if i not in found and not engine.terminated[i] and step >= stop[i]:
                mark = 1 if engine.states["status"][i, 0] == ACTIVE else 2
                found[i] = (engine.obs["board"][i].astype(np.int64), mark)
        if len(found) == count:
            break
        actions = np.zeros((count, 2), dtype=np.int64)
        for i in range(count):
            legal = np.flatnonzero(engine.obs["legal"][i])
            if len(legal):
                actions[i, :] = rng.choice(legal)
        engine.step(actions)
    return list(found.values())


def kaggle_negamax(module, monkeypatch, board, mark, config, pick):
    """Kaggle's negamax move with ``random.choice`` returning always the first or last option."""
    monkeypatch.setattr(
        module, "choice", (lambda xs: xs[0]) if pick == "first" else (lambda xs: xs[-1])
    )
    obs = SimpleNamespace(board=[int(v) for v in board], mark=mark)
    return module.negamax_agent(obs, SimpleNamespace(**config))


def a_stream(seed=0):
    r = np.zeros(1, dtype=AGENT_RNG)
    r[0]["rng"] = seed_word(seed, 0)
    return r[0]


def search(board, config, mark, mode, r=None):
    scratch = board.copy()
    column = agents.negamax_column(
        scratch,
        config["rows"],
        config["columns"],
        config["inarow"],
        mark,
        agents.DEPTH,
        a_stream() if r is None else r,
        mode,
    )
    np.testing.assert_array_equal(scratch, board)  # the search takes its checkers back
    return column


def root_scores(board, config, mark):
    scores = np.empty(config["columns"])
    scratch = board.copy()
    win = agents.negamax_scores(
        scratch, config["rows"], config["columns"], config["inarow"], mark, agents.DEPTH, scores
    )
    np.testing.assert_array_equal(scratch, board)
    return win, scores


AGENT_SIZES = [
    (dict(rows=6, columns=7, inarow=4), 40),
    (dict(rows=5, columns=4, inarow=3), 120),
    (dict(rows=4, columns=5, inarow=3), 100),
    (dict(rows=3, columns=8, inarow=3), 60),
    (dict(rows=4, columns=4, inarow=5), 60),
    (dict(rows=3, columns=8, inarow=2), 60),
    (dict(rows=1, columns=1, inarow=1), 1),
    (dict(rows=2, columns=1, inarow=1), 1),
]


@pytest.mark.parametrize(("config", "count"), AGENT_SIZES, ids=[size_id(c) for c, _ in AGENT_SIZES])
def test_negamax_matches_kaggle(config, count, monkeypatch):
    """With the coin replaced by the first (True) or the last option (False), our search plays
    Kaggle's column; the root's scores say which columns tie, and the agent's fair coin picks one
    of those (the one, where Kaggle's is deterministic)."""
    module = kaggle_connectx()
    size = config["rows"] * config["columns"]
    r = a_stream(7)
    chose_between = 0
    for board, mark in positions(config, count, seed=size):
        first = kaggle_negamax(module, monkeypatch, board, mark, config, "first")
        last = kaggle_negamax(module, monkeypatch, board, mark, config, "last")
        assert search(board, config, mark, agents.COIN_FIRST) == first
        assert search(board, config, mark, agents.COIN_LAST) == last
        win, scores = root_scores(board, config, mark)
        if win >= 0:
            possible = {win}
            assert first == last == win
        else:
            best = scores.max()
            ties = np.flatnonzero(scores == best)
            if best > -size:
                possible = set(ties.tolist())
                assert (first, last) == (ties[-1], ties[0])
            else:  # no column beats the start: a tie column, or at random an open one
                possible = set(np.flatnonzero(top_open(board, config["columns"])).tolist())
        picks = {search(board, config, mark, agents.COIN_RANDOM, r) for _ in range(8)}
        assert picks <= possible
        chose_between += len(possible) > 1
    if count > 1:
        assert chose_between > 0


def test_negamax_prefers_a_win_then_blocks():
    config = dict(rows=6, columns=7, inarow=4)
    board = np.zeros(42, dtype=np.int64)
    board[[35, 36, 37]] = 1  # mark 1 has three in the bottom row
    board[[28, 29]] = 2
    assert search(board, config, 1, agents.COIN_RANDOM) == 3
    assert search(board, config, 2, agents.COIN_RANDOM) == 3  # mark 2 must block


def set_position(engine, i, board, mark):
    record = engine.get_state(i)
    record["board"] = board
    # The counts the rules keep beside the board (set_state refuses a record without them).
    height = (np.asarray(board).reshape(engine.config["rows"], -1) != 0).sum(axis=0)
    record["height"] = height
    record["filled"] = height.sum()
    record["last"] = -1
    config = engine.config
    record["bits"] = rules.bitboards(
        np.asarray(board).reshape(1, -1), config["rows"], config["columns"]
    )[0]
    record["status"] = [ACTIVE, INACTIVE] if mark == 1 else [INACTIVE, ACTIVE]
    engine.set_state(record, i)


def test_agents_follow_the_protocol(monkeypatch):
    """``act`` on the engine's observations: the seat's mark, the agent's stream, its memory as
    scratch (``MEMORY`` words or more), the observations left as they were."""
    module = kaggle_connectx()
    config = dict(rows=5, columns=4, inarow=3)
    assert agents.NAMES == ("random", "negamax")
    assert agents.MEMORY(config) == 20
    engine = make_engine(num_envs=3, **config)
    cfg = engine.spec.config_record(engine.config)[0]
    checked = 0
    for board, mark in positions(config, 40, seed=3):
        win, scores = root_scores(board, config, mark)
        best = np.flatnonzero(scores == scores.max())
        if win < 0 and (len(best) > 1 or scores.max() <= -20):
            continue  # Kaggle's move is random here
        expected = kaggle_negamax(module, monkeypatch, board, mark, config, "first")
        set_position(engine, 1, board, mark)
        obs = tuple(engine.obs.values())
        before = [v.copy() for v in obs]
        for memory in (np.zeros(20, np.int64), np.full(64, 5, np.int64)):
            column = agents.act(agents.NEGAMAX, obs, 1, mark - 1, 0, cfg, memory, a_stream())
            assert column == expected
        for now, then in zip(obs, before, strict=True):
            np.testing.assert_array_equal(now, then)
        checked += 1
    assert checked >= 10


def test_negamax_agent_draws_its_coins_from_its_stream():
    config = dict(rows=6, columns=7, inarow=4)
    engine = make_engine(**config)
    cfg = engine.spec.config_record(engine.config)[0]
    obs = tuple(engine.obs.values())
    memory = np.zeros(agents.MEMORY(config), np.int64)
    win, scores = root_scores(np.zeros(42, np.int64), config, 1)
    ties = set(np.flatnonzero(scores == scores.max()).tolist())
    assert win < 0 and len(ties) > 1  # the empty board: several columns score the best
    r = a_stream(1)
    columns = []
    for _ in range(400):
        start = r["rng"]
        column = agents.act(agents.NEGAMAX, obs, 0, 0, 0, cfg, memory, r)
        assert r["rng"] != start
        again = a_stream()
        again["rng"] = start
        assert agents.act(agents.NEGAMAX, obs, 0, 0, 0, cfg, memory, again) == column
        columns.append(column)
    # Kaggle's coin goes to each tie in turn: the last of the seven ties wins half the time, the
    # one before it a quarter, ..., the first two 1/64 each.
    assert set(columns) == ties
    assert 160 <= columns.count(6) <= 240 and 70 <= columns.count(5) <= 130


def test_random_agent_plays_every_open_column_and_only_those():
    config = dict(rows=6, columns=7, inarow=4)
    engine = make_engine(**config)
    for column in (1,) * 6 + (5,) * 6:  # fills columns 1 and 5, no line of four
        engine.step(np.array([[column, column]]))
    legal = engine.obs["legal"][0].copy()
    assert legal.tolist() == [True, False, True, True, True, False, True]
    cfg = engine.spec.config_record(engine.config)[0]
    obs = tuple(engine.obs.values())
    r = a_stream(2)
    memory = np.zeros(0, np.int64)
    counts = np.zeros(7, dtype=np.int64)
    for _ in range(2000):
        counts[agents.act(agents.RANDOM, obs, 0, 0, 12, cfg, memory, r)] += 1
    assert (counts[legal] > 0).all() and (counts[~legal] == 0).all()


@settings(max_examples=300, deadline=None)
@given(
    rows=st.integers(1, 8),
    columns=st.integers(1, 8),
    inarow=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
    fill=st.floats(0, 1),
)
def test_negamax_plays_an_open_column_at_any_size(rows, columns, inarow, seed, fill):
    config = dict(rows=rows, columns=columns, inarow=inarow)
    rng = np.random.default_rng(seed)
    board = np.zeros(rows * columns, dtype=np.int64)
    mark = 1
    for _ in range(int(fill * (rows * columns - 1))):
        open_columns = np.flatnonzero(board[:columns] == 0)
        column = rng.choice(open_columns)
        row = max(r for r in range(rows) if board[column + r * columns] == 0)
        board[column + row * columns] = mark
        mark = 3 - mark
    assume_open = board[:columns] == 0
    for mode in (agents.COIN_RANDOM, agents.COIN_FIRST, agents.COIN_LAST):
        column = search(board, config, mark, mode, a_stream(seed))
        assert 0 <= column < columns and assume_open[column]


def test_negamax_stays_on_the_board_under_bounds_checking(tmp_path):
    """Every shape from 1 x 1 to 8 x 8 and inarow 1 to 6, positions from empty to one cell
    left, with numba checking every index (a fresh process, compiled apart)."""
    script = textwrap.dedent(
        """
        import numpy as np
        from vecenv.envs.connectx import agents
        from vecenv.kernels.agents import AGENT_RNG

        r = np.zeros(1, dtype=AGENT_RNG)[0]
        rng = np.random.default_rng(0)
        scores = np.empty(8)
        calls = 0
        for rows in range(1, 9):
            for columns in range(1, 9):
                for inarow in range(1, 7):
                    for left in sorted({rows * columns, (rows * columns + 1) // 2, 1}):
                        board = np.zeros(rows * columns, dtype=np.int64)
                        marks = rng.integers(1, 3, rows * columns - left)
                        board[left:] = marks  # floating checkers too: any board in bounds
                        for mode in (0, 1, 2):
                            c = agents.negamax_column(board, rows, columns, inarow, 1, 4, r, mode)
                            assert 0 <= c < columns and board[c] == 0, (rows, columns, c)
                        agents.negamax_scores(board, rows, columns, inarow, 2, 4, scores[:columns])
                        calls += 1
        full = np.ones(6, dtype=np.int64)
        assert agents.negamax_column(full, 2, 3, 2, 1, 4, r, 0) == -1
        print("calls", calls)
        """
    )
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "calls" in done.stdout


# Sizes the bitboard search takes (columns * (rows + 1) <= 64), with how many of their positions
# are also played by Kaggle's agent (slow at eight columns).
BIT_SIZES = [
    (dict(rows=6, columns=7, inarow=4), 10),
    (dict(rows=5, columns=4, inarow=3), 40),
    (dict(rows=4, columns=4, inarow=5), 30),
    (dict(rows=7, columns=8, inarow=5), 6),
    (dict(rows=3, columns=8, inarow=2), 40),
]


def scores_at(board, config, mark, depth, bits):
    scores = np.empty(config["columns"])
    scratch = board.copy()
    win = agents.negamax_scores(
        scratch, config["rows"], config["columns"], config["inarow"], mark, depth, scores, bits
    )
    np.testing.assert_array_equal(scratch, board)
    return win, scores


def column_at(board, config, mark, depth, mode, bits):
    scratch = board.copy()
    column = agents.negamax_column(
        scratch,
        config["rows"],
        config["columns"],
        config["inarow"],
        mark,
        depth,
        a_stream(),
        mode,
        bits,
    )
    np.testing.assert_array_equal(scratch, board)
    return column


def assert_same_search(board, config, mark, depth):
    """The bitboard search and the board array search: the same root scores and columns."""
    win, scores = scores_at(board, config, mark, depth, True)
    win_board, scores_board = scores_at(board, config, mark, depth, False)
    assert win == win_board
    np.testing.assert_array_equal(scores, scores_board)
    for mode in (agents.COIN_FIRST, agents.COIN_LAST):
        assert column_at(board, config, mark, depth, mode, True) == column_at(
            board, config, mark, depth, mode, False
        )
    return win


@pytest.mark.parametrize(("config", "count"), BIT_SIZES, ids=[size_id(c) for c, _ in BIT_SIZES])
def test_bitboard_search_is_the_board_search(config, count, monkeypatch):
    """On positions reached by play the bitboard search scores the root's columns as the board
    array search does, at every depth up to Kaggle's, and plays Kaggle's column."""
    assert agents.fits_bits(config["rows"], config["columns"])
    module = kaggle_connectx()
    wins = 0
    for k, (board, mark) in enumerate(positions(config, 200, seed=config["columns"] + 1)):
        for depth in range(agents.DEPTH + 1):
            wins += assert_same_search(board, config, mark, depth) >= 0
        if k < count:
            for pick, mode in (("first", agents.COIN_FIRST), ("last", agents.COIN_LAST)):
                expected = kaggle_negamax(module, monkeypatch, board, mark, config, pick)
                assert search(board, config, mark, mode) == expected
    # The positions include ones where the mover can win at once, where a line can be made.
    assert (wins > 0) == (config["inarow"] <= max(config["rows"], config["columns"]))


# Every shape up to 8 x 8 the bitboard search takes, and the longest and widest ones.
FITTING = [(r, c) for r in range(1, 9) for c in range(1, 9) if agents.fits_bits(r, c)]
FITTING += [(31, 2), (1, 32), (15, 4), (3, 16), (2, 21)]


@settings(max_examples=400, deadline=None)
@given(
    shape=st.sampled_from(FITTING),
    inarow=st.integers(1, 9),
    depth=st.integers(0, agents.DEPTH),
    seed=st.integers(0, 2**32 - 1),
    fill=st.floats(0, 1),
)
def test_bitboard_search_at_any_size_it_takes(shape, inarow, depth, seed, fill):
    rows, columns = shape
    assert agents.fits_bits(rows, columns)
    config = dict(rows=rows, columns=columns, inarow=inarow)
    if columns > 9:
        depth = min(depth, 2)  # the board array search is slow that wide
    rng = np.random.default_rng(seed)
    board = np.zeros(rows * columns, dtype=np.int64)
    mark = 1
    for _ in range(int(fill * rows * columns)):
        column = rng.choice(np.flatnonzero(board[:columns] == 0))
        row = max(r for r in range(rows) if board[column + r * columns] == 0)
        board[column + row * columns] = mark
        mark = 3 - mark
    assert_same_search(board, config, mark, depth)


def test_bitboard_search_takes_boards_of_64_bits_at_most():
    assert agents.fits_bits(6, 7) and agents.fits_bits(7, 8) and agents.fits_bits(1, 32)
    assert not agents.fits_bits(8, 8) and not agents.fits_bits(7, 9) and not agents.fits_bits(1, 33)
    assert not agents.fits_bits(4, 1)  # one column: the board array search


@settings(max_examples=300, deadline=None)
@given(
    shape=st.sampled_from(FITTING),
    inarow=st.integers(1, 9),
    seed=st.integers(0, 2**32 - 1),
    fill=st.floats(0, 1),
)
def test_line_test_on_bitboards_is_the_board_scan(shape, inarow, seed, fill):
    """Through every column's top checker, the rules' bitboard line test finds a line exactly
    when the scan of the board does, on boards of random checkers (lines elsewhere included)."""
    rows, columns = shape
    rng = np.random.default_rng(seed)
    board = np.zeros(rows * columns, dtype=np.int8)
    for _ in range(int(fill * rows * columns)):
        column = rng.choice(np.flatnonzero(board[:columns] == 0))
        row = max(r for r in range(rows) if board[column + r * columns] == 0)
        board[column + row * columns] = rng.integers(1, 3)
    bits = rules.bitboards(board.reshape(1, -1), rows, columns)[0]
    for column in range(columns):
        filled = np.flatnonzero(board.reshape(rows, columns)[:, column])
        if len(filled) == 0:
            continue
        row = int(filled[0])
        mark = int(board[column + row * columns])
        scanned = rules.wins(board, rows, columns, inarow, row, column, mark)
        assert rules.wins_bits(bits[mark - 1], rows, inarow, row, column) == scanned


def test_random_column_is_the_open_column_its_draw_names():
    """The random agent's column is the open one (in column order) numbered by its draw from
    its stream: Python's ``random.choice`` over the open columns."""
    from vecenv.kernels.rng import integer

    for mask in range(1, 2**7):
        board = np.ones(7, dtype=np.int8)
        open_columns = [c for c in range(7) if mask >> c & 1]
        board[open_columns] = 0
        for word in range(5):
            r = np.zeros(1, dtype=AGENT_RNG)[0]
            r["rng"] = seed_word(mask, word)
            copy = np.zeros(1, dtype=AGENT_RNG)[0]
            copy["rng"] = r["rng"]
            expected = open_columns[integer(copy, len(open_columns))]
            assert agents.random_column(r, board, 7) == expected
            assert r["rng"] == copy["rng"]  # one draw
    assert agents.random_column(np.zeros(1, dtype=AGENT_RNG)[0], np.ones(7, np.int8), 7) == -1


def test_last_must_name_a_column_holding_a_checker():
    engine = make_engine(rows=6, columns=7, inarow=4)
    engine.step(np.array([[3, 0]]))
    record = engine.get_state(0)
    assert record["last"] == 3
    for bad in (7, -2, 0):  # off the board, or a column with no checker
        changed = record.copy()
        changed["last"] = bad
        with pytest.raises(ValueError, match="last"):
            engine.set_state(changed, 0)
    for good in (-1, 3):
        changed = record.copy()
        changed["last"] = good
        engine.set_state(changed, 0)


# -- the renderers -----------------------------------------------------------------------------


@pytest.mark.parametrize("config", SIZES, ids=size_id)
def test_ansi_is_kaggles_text(config):
    rng = np.random.default_rng(5)
    game = SideBySide(config)  # checks the text after every step
    for _ in range(min(6, config["rows"] * config["columns"] - 1)):
        if game.env.done:
            break
        actions = [0, 0]
        actions[game.mover] = int(rng.choice(np.flatnonzero(top_open(game.board, game.columns))))
        game.step(actions)
    text = render.ansi(game.engine.states[0], game.engine.config)
    lines = text.split("\n")
    assert text.endswith("\n") and len(lines) == 2 * config["rows"] + 2
    assert lines[0] == "+" + "---+" * config["columns"]


def test_rgb_array_colours_each_cell():
    config = dict(rows=4, columns=5, inarow=3)
    engine = make_engine(**config)
    for column in (0, 0, 3, 1):
        engine.step(np.array([[column, column]]))
    board = engine.states["board"][0].reshape(4, 5)
    assert board[3].tolist() == [1, 2, 0, 1, 0] and board[2].tolist() == [2, 0, 0, 0, 0]
    img = engine.render(0)
    assert img.dtype == np.uint8 and img.shape == (4 * render.CELL, 5 * render.CELL, 3)
    colours = {0: (255, 255, 255), 1: (0xE5, 0x39, 0x35), 2: (0xFD, 0xD8, 0x35)}
    half = render.CELL // 2
    for row in range(4):
        for column in range(5):
            y, x = row * render.CELL, column * render.CELL
            assert tuple(img[y + half, x + half]) == colours[board[row, column]]
            assert tuple(img[y, x]) == render.BLUE  # the corners are the board's
            assert tuple(img[y + render.CELL - 1, x + render.CELL - 1]) == render.BLUE
    assert np.array_equal(render.rgb_array(engine.states[0], engine.config), img)


# -- random input ------------------------------------------------------------------------------


def assert_consistent(engine, config):
    rows, columns = config["rows"], config["columns"]
    for i in range(engine.num_envs):
        record = engine.states[i]
        board = record["board"].reshape(rows, columns)
        assert ((board >= 0) & (board <= 2)).all()
        filled = board != 0
        assert (filled[:-1] <= filled[1:]).all()  # no checker floats above an empty cell
        ones, twos = int((board == 1).sum()), int((board == 2).sum())
        assert ones - twos in (0, 1)
        assert record["step"] >= ones + twos
        status = record["status"].tolist()
        running = ACTIVE in status
        assert bool(engine.terminated[i]) == (not running)
        if running:
            assert status == ([ACTIVE, INACTIVE] if ones == twos else [INACTIVE, ACTIVE])
            assert (record["reward"] == 0).all()
        else:
            assert all(code in (DONE, INVALID) for code in status)
        rewards = record["reward"].tolist()
        assert rewards in ([0.0, 0.0], [1.0, -1.0], [-1.0, 1.0])
        np.testing.assert_array_equal(engine.obs["board"][i], record["board"])
        np.testing.assert_array_equal(engine.obs["legal"][i], (board[0] == 0) & running)


shapes = st.sampled_from(SHAPES)


@FUZZ
@given(shape=shapes, inarow=st.integers(1, 6), data=st.data())
def test_random_moves_never_crash(shape, inarow, data):
    rows, columns = shape
    config = dict(rows=rows, columns=columns, inarow=inarow)
    engine = make_engine(num_envs=3, seed=data.draw(st.integers(0, 100)), **config)
    moves = data.draw(
        st.lists(st.lists(st.integers(0, columns - 1), min_size=6, max_size=6), max_size=70)
    )
    for row in moves:
        before = engine.get_state()
        _, rewards, terminated, _ = engine.step(np.array(row, dtype=np.int64).reshape(3, 2))
        assert set(rewards.ravel().tolist()) <= {-1.0, 0.0, 1.0}
        for i in range(3):
            if before["done"][i]:  # an ended episode stays as it was
                np.testing.assert_array_equal(before[i : i + 1], engine.states[i : i + 1])
                assert (rewards[i] == 0).all()
        assert_consistent(engine, config)


garbage = st.sampled_from(
    [("board", 7), ("board", -1), ("board", 3), ("status", 9), ("status", -2), ("reward", np.nan)]
)


@FUZZ
@given(shape=shapes, bad=garbage, episode=st.integers(0, 2), cell=st.integers(0, 63))
def test_garbage_records_are_refused(shape, bad, episode, cell):
    rows, columns = shape
    engine = make_engine(num_envs=3, seed=1, rows=rows, columns=columns, inarow=3)
    engine.step(np.zeros((3, 2), dtype=np.int64))
    field, value = bad
    state = engine.get_state()
    values = state[field][episode]
    values[cell % values.shape[0]] = value
    before = engine.get_state()
    obs = {k: v.copy() for k, v in engine.obs.items()}
    with pytest.raises(ValueError, match=field):
        engine.set_state(state)
    with pytest.raises(ValueError, match=field):
        engine.set_state(state[episode], episode)
    np.testing.assert_array_equal(engine.get_state(), before)
    for name, values in obs.items():
        np.testing.assert_array_equal(engine.obs[name], values)


@FUZZ
@given(shape=shapes, inarow=st.integers(1, 6), victim=st.integers(0, 3), data=st.data())
def test_an_invalid_move_changes_no_other_episode(shape, inarow, victim, data):
    """Two engines play the same moves, except that in one the victim's mover plays a full
    column when it can; every other episode runs the same in both."""
    rows, columns = shape
    config = dict(rows=rows, columns=columns, inarow=inarow)
    seed = data.draw(st.integers(0, 100))
    same, other = make_engine(4, seed, **config), make_engine(4, seed, **config)
    others = [i for i in range(4) if i != victim]
    moves = data.draw(
        st.lists(st.lists(st.integers(0, columns - 1), min_size=8, max_size=8), max_size=50)
    )
    spoiled = False
    for row in moves:
        actions = np.array(row, dtype=np.int64).reshape(4, 2)
        changed = actions.copy()
        full = np.flatnonzero(~top_open(other.obs["board"][victim], columns))
        if len(full) and not other.terminated[victim]:
            changed[victim, :] = full[0]
            spoiled = True
        same.step(actions)
        other.step(changed)
        np.testing.assert_array_equal(same.get_state(others), other.get_state(others))
        for name in same.obs:
            np.testing.assert_array_equal(same.obs[name][others], other.obs[name][others])
        np.testing.assert_array_equal(same.rewards[others], other.rewards[others])
        np.testing.assert_array_equal(same.terminated[others], other.terminated[others])
    if spoiled:
        assert INVALID in other.states["status"][victim].tolist()


# The boards this module's engines play, in the order its tests first make them: tests/warmup.py
# compiles them ahead on the core the test process leaves idle.
WARM = [
    ("connectx", {"rows": rows, "columns": columns})
    for rows, columns in dict.fromkeys(
        [(c["rows"], c["columns"]) for c in SIZES]
        + [(c["rows"], c["columns"]) for c, _ in AGENT_SIZES + BIT_SIZES]
        + SHAPES
    )
]
