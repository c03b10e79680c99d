"""vecenv.search.MCTS: its results, its determinism, its evaluator protocol and bad input."""

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from vecenv.kernels import search as kernels
from vecenv.kernels.agents import AGENT_RNG
from vecenv.kernels.turns import ACTIVE, DONE, INACTIVE
from vecenv.search import MCTS

FIELDS = ("action", "policy", "visit_counts", "qvalues", "root_value", "searched")


def same(a, b):
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)


def played(game, n, plies, seed=0):
    """An engine of ``n`` episodes, each ``plies`` uniformly random legal plies from the start
    (some may be over)."""
    engine = vecenv.make(game, num_envs=n, seed=seed, autoreset="disabled")
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        legal = np.asarray(engine.obs["legal"], dtype=np.float64) + 1e-9
        moves = np.array([rng.choice(len(p), p=p / p.sum()) for p in legal])
        engine.step(np.stack([moves, moves], axis=1))
    return engine


@pytest.fixture(scope="module")
def connectx():
    return played("connectx", 24, 6)


@pytest.fixture(scope="module")
def tictactoe():
    return played("tictactoe", 16, 3, seed=1)


# -- results ---------------------------------------------------------------------------------------


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    selection=st.sampled_from(["uct", "puct", "gumbel"]),
    evaluator=st.sampled_from(["rollout", "uniform"]),
    simulations=st.integers(1, 40),
    seed=st.integers(0, 2**63),
)
def test_results_are_a_search_of_the_legal_moves(
    tictactoe, selection, evaluator, simulations, seed
):
    states = tictactoe.get_state()
    mcts = MCTS(tictactoe, simulations, selection=selection, evaluator=evaluator)
    r = mcts.search(states, seed=seed)
    running = (states["done"] == 0) & (states["status"] == ACTIVE).any(axis=1)
    np.testing.assert_array_equal(r.searched, running)
    legal = np.asarray(tictactoe.obs["legal"])
    rows = np.flatnonzero(r.searched)
    assert (r.visit_counts[rows].sum(axis=1) == simulations).all()
    assert (r.visit_counts[~legal] == 0).all()
    assert legal[rows, r.action[rows]].all()
    np.testing.assert_allclose(r.policy[rows].sum(axis=1), 1.0)
    assert (r.policy[~legal] == 0).all()
    assert (np.abs(r.qvalues) <= 1 + 1e-12).all() and (np.abs(r.root_value) <= 1).all()
    assert (r.action[~r.searched] == -1).all() and (r.seats[~r.searched] == -1).all()
    np.testing.assert_array_equal(r.seats[rows], np.argmax(states["status"][rows] == ACTIVE, 1))


def test_a_win_in_one_is_taken_and_a_loss_in_one_blocked():
    engine = vecenv.make("tictactoe", num_envs=2, seed=0)
    x, o = 1, 2
    engine.reset(
        position=[
            {"observation": {"board": [x, x, 0, o, o, 0, 0, 0, 0]}},  # X to move wins at 2
            {
                "observation": {"board": [x, x, 0, o, 0, 0, 0, 0, 0]},  # O to move blocks at 2
                "status": ["INACTIVE", "ACTIVE"],
            },
        ]
    )
    for selection in ("uct", "puct", "gumbel"):
        r = MCTS(engine, 400, selection=selection).search(engine.get_state(), seed=0)
        assert r.action.tolist() == [2, 2], selection
        assert r.qvalues[0, 2] == 1.0  # the win ends the game: its value is the reward


def test_positions_over_or_masked_are_not_searched(tictactoe):
    states = tictactoe.get_state()
    states["status"][0] = (DONE, DONE)
    states["done"][0] = 1
    mask = np.ones(len(states), dtype=np.bool_)
    mask[1] = False
    r = MCTS(tictactoe, 8).search(states, seed=0, mask=mask)
    assert not r.searched[:2].any() and r.searched[2:].any()
    assert (r.visit_counts[:2] == 0).all() and (r.action[:2] == -1).all()


def test_a_seat_without_a_legal_move_answers_no_move():
    """A running position whose mover has no legal move (a full board the rules let run on)."""
    engine = vecenv.make("tictactoe", num_envs=1, seed=0)
    engine.reset(position={"observation": {"board": [1, 2, 1, 1, 2, 2, 2, 1, 1]}})
    r = MCTS(engine, 5).search(engine.get_state(), seed=0)
    assert r.searched[0] and r.action[0] == -1 and (r.visit_counts == 0).all()


def test_simultaneous_moves_need_the_searching_seat():
    engine = vecenv.make("rps", num_envs=3, seed=0, episodeSteps=6)
    mcts = MCTS(engine, 30)
    with pytest.raises(ValueError, match="both seats are to move in position 0"):
        mcts.search(engine.get_state(), seed=0)
    r = mcts.search(engine.get_state(), seed=0, seats=np.array([0, 1, 1]))
    assert r.searched.all() and r.seats.tolist() == [0, 1, 1]
    assert (r.visit_counts.sum(axis=1) == 30).all() and (r.action >= 0).all()


def test_depth_cut_off(tictactoe):
    states = tictactoe.get_state()
    shallow = MCTS(tictactoe, 30, max_depth=1).search(states, seed=2)
    deep = MCTS(tictactoe, 30).search(states, seed=2)
    rows = np.flatnonzero(shallow.searched)
    assert (shallow.visit_counts[rows].sum(axis=1) == 30).all()
    assert not np.array_equal(shallow.visit_counts, deep.visit_counts)


def test_temperature_draws_actions_by_visits():
    engine = vecenv.make("connectx", num_envs=3000, seed=0)
    mcts = MCTS(engine, 25, selection="puct", evaluator="uniform", temperature=1.0)
    r = mcts.search(engine.get_state(), seed=4)
    shares = r.policy[0]  # uniform leaves: every tree has the same visits
    assert (r.policy == shares).all() and len(set(r.visit_counts[0])) > 1
    counts = np.bincount(r.action, minlength=7) / len(r.action)
    np.testing.assert_allclose(counts, shares, atol=0.03)
    greedy = MCTS(engine, 25, selection="puct", evaluator="uniform").search(engine.get_state(), 4)
    assert set(greedy.action) <= set(np.flatnonzero(r.visit_counts[0] == r.visit_counts[0].max()))


def test_dirichlet_noise_and_its_gamma_draws():
    r = np.zeros(1, dtype=AGENT_RNG)
    r["rng"] = 7
    for shape in (0.3, 2.5):
        draws = np.array([kernels.gamma(r[0], shape) for _ in range(20000)])
        assert draws.min() > 0
        assert draws.mean() == pytest.approx(shape, rel=0.05)
        assert draws.var() == pytest.approx(shape, rel=0.1)
    engine = vecenv.make("connectx", num_envs=200, seed=0)
    quiet = MCTS(engine, 16, selection="puct", evaluator="uniform").search(engine.get_state(), 1)
    noisy = MCTS(engine, 16, selection="puct", evaluator="uniform", dirichlet_fraction=0.5).search(
        engine.get_state(), 1
    )
    assert len({tuple(v) for v in quiet.visit_counts.tolist()}) == 1
    assert len({tuple(v) for v in noisy.visit_counts.tolist()}) > 50


# -- determinism -----------------------------------------------------------------------------------


@pytest.mark.parametrize("selection", ["uct", "gumbel"])
def test_same_seed_same_search_for_any_threads_and_batch_split(connectx, selection):
    states = connectx.get_state()
    one = MCTS(connectx, 40, selection=selection).search(states, seed=9)
    two = MCTS(connectx, 40, selection=selection, num_threads=2).search(states, seed=9)
    batches = MCTS(connectx, 40, selection=selection, max_trees=5).search(states, seed=9)
    assert same(one, two) and same(one, batches)
    words = np.zeros(len(states), dtype=np.uint64)
    kernels_seed = vecenv.kernels.rng.seed_words
    kernels_seed(np.uint64(9), words, np.ones(len(states), dtype=np.bool_))
    tail = words[10:].copy()
    part = MCTS(connectx, 40, selection=selection).search(states[10:], seed=tail)
    assert np.array_equal(part.visit_counts, one.visit_counts[10:])
    assert np.array_equal(part.action, one.action[10:])
    assert not np.array_equal(tail, words[10:])  # the streams advanced
    other = MCTS(connectx, 40, selection=selection).search(states, seed=10)
    assert not same(one, other)


@pytest.mark.parametrize("selection", ["uct", "puct"])
def test_the_table_of_visit_terms_is_what_the_search_would_compute(
    connectx, selection, monkeypatch
):
    states = connectx.get_state()
    tabled = MCTS(connectx, 40, selection=selection).search(states, seed=4)
    monkeypatch.setattr(vecenv.search, "TERMS", 3)  # past 2 visits the search computes them
    short = MCTS(connectx, 40, selection=selection)
    assert short._params[3].shape == (2, 3)
    assert same(tabled, short.search(states, seed=4))


def test_pickled_search_searches_alike(connectx):
    mcts = MCTS(connectx, 20)
    first = mcts.search(connectx.get_state(), seed=3)
    again = pickle.loads(pickle.dumps(mcts)).search(connectx.get_state(), seed=3)
    assert same(first, again)


def test_a_game_by_name():
    mcts = MCTS("TicTacToe-v0", 10)
    engine = vecenv.make("tictactoe", num_envs=2, seed=0)
    assert mcts.search(engine.get_state(), seed=0).searched.all()
    assert "tictactoe" in repr(mcts)


# -- a Python evaluator ----------------------------------------------------------------------------


def test_the_evaluator_sees_the_movers_leaves_in_batches(connectx):
    calls = []

    def evaluator(obs, legal):
        calls.append((obs["board"].copy(), obs["mark"].copy(), legal.copy()))
        n = legal.shape[0]
        return np.zeros((n, 7)), np.zeros(n)

    states = connectx.get_state()
    r = MCTS(connectx, 6, selection="puct", evaluator=evaluator).search(states, seed=0)
    assert len(calls) == 7  # the roots, then once per simulation, every tree at once
    board, mark, legal = calls[0]
    rows = np.flatnonzero(r.searched)
    assert len(mark) == len(rows)
    np.testing.assert_array_equal(board, connectx.obs["board"][rows])
    np.testing.assert_array_equal(legal, connectx.obs["legal"][rows])
    movers = np.argmax(states["status"][rows] == ACTIVE, axis=1)
    np.testing.assert_array_equal(mark, movers + 1)
    for board, mark, legal in calls[1:]:
        filled = (board != 0).sum(axis=1)
        live = legal.any(axis=1)
        # A leaf is one ply below its root (or more): the mover's mark follows the checkers.
        assert ((filled[live] % 2) == (mark[live] - 1)).all()
    uniform = MCTS(connectx, 6, selection="puct", evaluator="uniform").search(states, seed=0)
    assert same(r, uniform)


@pytest.mark.parametrize(
    "answer,message",
    [
        (lambda n: None, r"must return \(logits, values\)"),
        (lambda n: (np.zeros((1, 7)), np.zeros(n)), "logits must have shape"),
        (lambda n: (np.zeros((n, 7)), np.zeros(3)), "values must have shape"),
        (lambda n: (np.full((n, 7), np.nan), np.zeros(n)), "logits must be finite"),
        (lambda n: (np.zeros((n, 7)), np.full(n, np.inf)), "values must be finite"),
        (lambda n: (np.zeros((n, 7)), np.array(["a"] * n)), "values must be numbers"),
        (lambda n: (np.zeros((n, 7)), [None] * n), "values must be finite"),
        (lambda n: (np.zeros((n, 7)), np.full(n, 1e308)), r"values must be within \+-"),
        (lambda n: (np.zeros((n, 7), dtype=complex), np.zeros(n)), "logits must be real"),
    ],
)
def test_a_bad_evaluator_answer_is_refused(connectx, answer, message):
    def evaluator(obs, legal):
        return answer(legal.shape[0])

    with pytest.raises(ValueError, match=message):
        MCTS(connectx, 3, evaluator=evaluator).search(connectx.get_state(), seed=0)


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"simulations": 0}, "simulations must be an integer"),
        ({"simulations": 2.5}, "simulations must be an integer"),
        ({"simulations": 2**40}, "simulations must be an integer"),
        ({"selection": "alphazero"}, "selection must be one of"),
        ({"evaluator": "network"}, "evaluator must be"),
        ({"c_init": float("nan")}, "c_init must be a finite number"),
        ({"uct_c": -1}, "uct_c must be a finite number"),
        ({"dirichlet_fraction": 1.5}, "dirichlet_fraction"),
        ({"dirichlet_alpha": 0}, "dirichlet_alpha"),
        ({"temperature": "hot"}, "temperature must be a finite number"),
        ({"max_depth": 0}, "max_depth must be an integer"),
        ({"num_threads": 10_000}, "num_threads must be an integer"),
        ({"max_trees": -1}, "max_trees must be an integer"),
        ({"simulations": 10**6, "memory_budget": "1M"}, "over the memory budget"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    kwargs = {"simulations": 8, **kwargs}
    with pytest.raises(ValueError, match=message):
        MCTS("tictactoe", **kwargs)


@pytest.mark.parametrize(
    "game,message",
    [
        ("pendulum", "not one discrete choice"),
        ("kuhn_poker", "hidden information"),
    ],
)
def test_games_it_cannot_search_are_refused(game, message):
    with pytest.raises(ValueError, match=message):
        MCTS(game, 4)


def test_bad_positions_and_seeds_are_refused(tictactoe):
    mcts = MCTS(tictactoe, 4)
    states = tictactoe.get_state()
    bad = states.copy()
    bad["board"][3, 0] = 7
    with pytest.raises(ValueError, match="'board' must be in"):
        mcts.search(bad, seed=0)
    bad = states.copy()
    bad["reward"][2, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        mcts.search(bad, seed=0)
    with pytest.raises(ValueError, match="1-d array of tictactoe's records"):
        mcts.search(states.reshape(4, 4), seed=0)
    with pytest.raises(ValueError, match="1-d array of tictactoe's records"):
        mcts.search(np.zeros(16), seed=0)
    for seed in (-1, 2**64, 1.5, "0", np.zeros(16, dtype=np.int64), np.zeros(3, dtype=np.uint64)):
        with pytest.raises(ValueError, match="seed must be"):
            mcts.search(states, seed=seed)
    with pytest.raises(ValueError, match="mask must be a bool array"):
        mcts.search(states, seed=0, mask=np.ones(16, dtype=np.int64))
    with pytest.raises(ValueError, match="seats must be"):
        mcts.search(states, seed=0, seats=np.full(16, 2))
    movers = np.argmax(states["status"] == ACTIVE, axis=1)
    running = np.flatnonzero(states["done"] == 0)
    wrong = movers.copy()
    wrong[running[0]] = 1 - wrong[running[0]]
    with pytest.raises(ValueError, match=f"seat {wrong[running[0]]} is not to move"):
        mcts.search(states, seed=0, seats=wrong)
    assert (states["status"][running] != INACTIVE).any(axis=1).all()
