"""vecenv.search.MCTS against hostile use: every accepted setting answers legal actions and finite
numbers, settings it cannot honour are refused by name, one object is never searched twice at
once, terminal positions say so, and its memory cap says how to raise it."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from vecenv import registry
from vecenv.cli.common import two_agent_games
from vecenv.kernels.turns import ACTIVE
from vecenv.search import MCTS
from vecenv.search_checks import SETTING_LIMIT

# The search refuses games of hidden information (tests/test_hidden_information.py).
GAMES = [game for game in two_agent_games() if not registry.hidden_information(game)]
TINY = 1.0 / SETTING_LIMIT


def running(game, n=3, plies=2, seed=0):
    """``n`` episodes of ``game`` after ``plies`` uniformly random legal plies."""
    engine = vecenv.make(game, num_envs=n, seed=seed, autoreset="disabled")
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        legal = legal_masks(engine, engine.get_state())
        moves = [[rng.choice(np.flatnonzero(m)) for m in row] for row in legal]
        engine.step(np.asarray(moves) + int(engine.action.low[0]))
    return engine


def legal_masks(engine, states):
    """(N, 2, A) bool: each seat's legal actions (every action where the game has no mask)."""
    n = len(states)
    a = int(engine.action.high[0] - engine.action.low[0]) + 1
    if "legal" not in engine.obs:
        return np.ones((n, 2, a), dtype=np.bool_)
    legal = np.asarray(engine.obs["legal"])
    return legal if legal.ndim == 3 else np.repeat(legal[:, None], 2, axis=1)


@pytest.fixture(scope="module")
def engines():
    return {game: running(game) for game in GAMES}


def floats(low, high):
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


SETTINGS = {
    "c_init": floats(0.0, SETTING_LIMIT),
    "c_base": floats(TINY, SETTING_LIMIT),
    "uct_c": floats(0.0, SETTING_LIMIT),
    "max_considered": st.integers(1, 2**16),
    "gumbel_scale": floats(0.0, SETTING_LIMIT),
    "value_scale": floats(0.0, SETTING_LIMIT),
    "maxvisit_init": floats(0.0, SETTING_LIMIT),
    "dirichlet_fraction": floats(0.0, 1.0),
    "dirichlet_alpha": floats(TINY, SETTING_LIMIT),
    "temperature": floats(0.0, SETTING_LIMIT),
    "max_depth": st.none() | st.integers(1, 2**31 - 1),
    "rollout_limit": st.none() | st.integers(1, 2**62),
}


def network(scale, seed):
    """A Python evaluator answering random logits of size ``scale`` and values in [-1, 1]."""
    rng = np.random.default_rng(seed)

    def evaluator(obs, legal):
        n, a = legal.shape
        return rng.uniform(-scale, scale, (n, a)), rng.uniform(-1, 1, n)

    return evaluator


@settings(
    max_examples=24,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    game=st.sampled_from(GAMES),
    selection=st.sampled_from(["puct", "gumbel", "uct"]),
    evaluator=st.sampled_from(["rollout", "uniform", "network"]),
    logit_scale=floats(0.0, 1e300),
    simulations=st.integers(1, 6),
    options=st.fixed_dictionaries({}, optional=SETTINGS),
    seed=st.integers(0, 2**63),
)
def test_every_accepted_setting_answers_legal_actions_and_finite_numbers(
    engines, game, selection, evaluator, logit_scale, simulations, options, seed
):
    engine = engines[game]
    states = engine.get_state()
    if evaluator == "network":
        evaluator = network(logit_scale, seed)
    mcts = MCTS(engine, simulations, selection=selection, evaluator=evaluator, **options)
    both = (states["status"] == ACTIVE).all(axis=1)
    seats = np.where(both, 0, np.argmax(states["status"] == ACTIVE, axis=1))
    r = mcts.search(states, seed=seed, seats=seats)
    for name in ("policy", "qvalues", "root_value"):
        assert np.isfinite(getattr(r, name)).all(), name
    rows = np.flatnonzero(r.searched & ~r.terminal)
    assert rows.size  # the positions are running
    legal = legal_masks(engine, states)[rows, r.seats[rows]]
    low = int(engine.action.low[0])
    assert legal[np.arange(rows.size), r.action[rows] - low].all()
    assert (r.visit_counts[rows].sum(axis=1) == simulations).all()
    np.testing.assert_allclose(r.policy[rows].sum(axis=1), 1.0)
    assert (r.policy[rows][~legal] == 0).all() and (r.policy >= 0).all()


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"dirichlet_alpha": 1e-101, "dirichlet_fraction": 0.25}, "dirichlet_alpha"),
        ({"dirichlet_alpha": 1e-320}, "dirichlet_alpha"),
        ({"value_scale": 1e200}, "value_scale"),
        ({"maxvisit_init": 1e308}, "maxvisit_init"),
        ({"gumbel_scale": float("inf")}, "gumbel_scale"),
        ({"c_base": 5e-324}, "c_base"),
        ({"c_init": 10**400}, "c_init"),
        ({"uct_c": 1e101}, "uct_c"),
        ({"temperature": 1e200}, "temperature"),
        ({"temperature": -0.0 - 1e-300}, "temperature"),
    ],
)
def test_settings_it_cannot_honour_are_refused_by_name(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name} must be a finite number in"):
        MCTS("tictactoe", 4, **kwargs)


def test_a_tiny_dirichlet_alpha_still_plays_legal_moves(engines):
    """The noise of alpha 1e-100 is one-hot; its draws underflow to 0, their logarithms do not."""
    engine = engines["connectx"]
    r = MCTS(
        engine,
        8,
        selection="puct",
        evaluator="uniform",
        dirichlet_fraction=1.0,
        dirichlet_alpha=TINY,
    ).search(engine.get_state(), seed=0)
    assert r.searched.all() and (r.action >= 0).all()
    np.testing.assert_allclose(r.policy.sum(axis=1), 1.0)


def test_largest_gumbel_scales_answer_finite_policies(engines):
    engine = engines["connectx"]
    for evaluator in ("rollout", "uniform"):
        r = MCTS(
            engine,
            12,
            selection="gumbel",
            evaluator=evaluator,
            value_scale=SETTING_LIMIT,
            maxvisit_init=SETTING_LIMIT,
            gumbel_scale=SETTING_LIMIT,
        ).search(engine.get_state(), seed=1)
        assert np.isfinite(r.policy).all() and (r.action >= 0).all()
        np.testing.assert_allclose(r.policy.sum(axis=1), 1.0)


# -- one search at a time ------------------------------------------------------------------------


def test_a_search_reentered_from_its_evaluator_is_refused_and_the_object_still_works(engines):
    engine = engines["connectx"]
    states = engine.get_state()
    inner = []

    def evaluator(obs, legal):
        n = legal.shape[0]
        try:
            mcts.search(states, seed=5)
        except RuntimeError as e:
            inner.append(str(e))
            raise
        return np.zeros((n, 7)), np.zeros(n)

    mcts = MCTS(engine, 4, selection="puct", evaluator=evaluator)
    with pytest.raises(RuntimeError, match="its evaluator called it again"):
        mcts.search(states, seed=1)
    assert len(inner) == 1
    mcts.evaluator = "uniform"  # the same object searches again, as a fresh one would
    again = mcts.search(states, seed=2)
    fresh = MCTS(engine, 4, selection="puct", evaluator="uniform").search(states, seed=2)
    np.testing.assert_array_equal(again.visit_counts, fresh.visit_counts)
    np.testing.assert_array_equal(again.action, fresh.action)


def test_a_search_from_a_second_thread_is_refused_at_once(engines):
    engine = engines["tictactoe"]
    states = engine.get_state()
    inside, release = threading.Event(), threading.Event()

    def evaluator(obs, legal):
        inside.set()
        assert release.wait(60)  # held until the other thread has tried
        n, a = legal.shape
        return np.zeros((n, a)), np.zeros(n)

    mcts = MCTS(engine, 2, selection="puct", evaluator=evaluator)
    results = []
    worker = threading.Thread(target=lambda: results.append(mcts.search(states, seed=0)))
    worker.start()
    try:
        assert inside.wait(60)
        with pytest.raises(RuntimeError, match="not shared between threads"):
            mcts.search(states, seed=0)
    finally:
        release.set()
        worker.join(60)
    assert len(results) == 1 and results[0].searched.any()


# -- terminal positions ----------------------------------------------------------------------------


def test_terminal_positions_are_said_to_be_terminal():
    engine = vecenv.make("tictactoe", num_envs=3, seed=0)
    engine.reset(
        position=[
            {"observation": {"board": [1, 2, 1, 1, 2, 2, 2, 1, 1]}},  # running, no legal move
            {"observation": {"board": [1, 1, 0, 2, 2, 0, 0, 0, 0]}},  # X to move
            {"observation": {"board": [1, 1, 0, 2, 2, 0, 0, 0, 0]}},
        ]
    )
    states = engine.get_state()
    states["done"][2] = 1
    r = MCTS(engine, 5).search(states, seed=0)
    assert r.terminal.tolist() == [True, False, True]
    assert r.action.tolist()[0::2] == [-1, -1] and r.action[1] == 2
    assert r.searched.tolist() == [True, True, False]


# -- the trees' memory -----------------------------------------------------------------------------


def test_the_memory_cap_says_the_real_limit_and_how_to_raise_it(monkeypatch):
    monkeypatch.delenv("VECENV_MEMORY_BUDGET", raising=False)
    for selection in ("uct", "gumbel"):
        with pytest.raises(ValueError) as caught:
            MCTS("connectx", 2**24, selection=selection)
        message = str(caught.value)
        assert "256.0 MiB" in message and "-" not in message.split("budget of")[1][:12]
        assert "memory_budget=" in message and "VECENV_MEMORY_BUDGET=16G" in message
    assert "Gumbel's schedule 512.0 MiB" in message
    # The variable lifts the default cap (nothing is allocated before a search).
    with pytest.raises(ValueError, match="over the memory budget"):
        MCTS("connectx", 2_000_000)
    monkeypatch.setenv("VECENV_MEMORY_BUDGET", "2G")
    assert MCTS("connectx", 2_000_000).max_trees >= 1
    assert MCTS("connectx", 2_000_000, memory_budget="1G").max_trees >= 1


def test_the_command_line_says_it_in_one_line():
    env = {k: v for k, v in os.environ.items() if k != "VECENV_MEMORY_BUDGET"}
    done = subprocess.run(
        [sys.executable, "-m", "vecenv", "play", "connectx", "--agents", "mcts:16777216", "random"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "VECENV_MEMORY_BUDGET=16G" in lines[0], done.stderr
