"""The search in games of chance: an expectation over outcomes it draws itself, never the episode's.

"gamble" is a one-agent game written here (a folder registered for the tests): each of ``rounds``
steps, action 0 takes 0.5 for sure, action 1 wins 1 with probability 0.4 (drawn in ``step`` from
the record's stream; the game declares ``CHANCE``), else 0. The search must prefer the sure 0.5
and value the gamble near 0.4, whatever the episode itself would draw; the same game without the
declaration shows what peeking at the episode's stream does. 2048 (``game_2048``) is searched too:
its tiles under chance nodes.
"""

import json

import numpy as np
import pytest

import vecenv
from vecenv import registry, testing
from vecenv.kernels.search import NODE
from vecenv.search import MCTS

SPEC = {
    "name": "gamble",
    "title": "Gamble",
    "description": "Each step: 0 takes 0.5, 1 wins 1 with probability 0.4, else nothing.",
    "version": "1.0.0",
    "agents": [1],
    "configuration": {
        "rounds": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1},
        "win": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.4},
    },
    "reward": {"type": "number", "minimum": 0, "maximum": 1},
    "observation": {
        "left": {"type": "integer", "shape": [], "dtype": "int64", "low": 0, "high": 9}
    },
    "action": {"type": "integer", "minimum": 0, "maximum": 1, "default": 0},
}

RULES = """
import numba as nb
import numpy as np

from vecenv.kernels.rng import uniform

CHANCE = True
FIELDS = [("left", np.int64)]


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.left = cfg.rounds


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    if actions[0] == 0:
        rewards[0] = 0.5
    else:
        rewards[0] = 1.0 if uniform(s) < cfg.win else 0.0
    s.left -= 1
    return 1 if s.left == 0 else 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    obs[0][i, 0] = s.left
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The game's folder, and a copy without the declaration ("peeking"): written once, so that
    their compiled searches are cached for every test here (each test registers them anew)."""
    root = tmp_path_factory.mktemp("chance_games")
    for name, chance in (("gamble", True), ("peeking", False)):
        folder = root / name
        folder.mkdir()
        (folder / f"{name}.json").write_text(json.dumps(dict(SPEC, name=name)))
        (folder / "rules.py").write_text(RULES if chance else RULES.replace("CHANCE = True\n", ""))
    return root


@pytest.fixture
def gamble(folders):
    return vecenv.register(folders / "gamble")


@pytest.fixture
def peeking(folders):
    return vecenv.register(folders / "peeking")


def positions(game, n, **configuration):
    """``n`` records of the game's start, each with an episode stream of its own."""
    return vecenv.make(game, num_envs=n, seed=3, **configuration).get_state()


def test_the_episodes_stream_never_changes_the_search(gamble, peeking):
    """Records alike but for their streams: the same search, move and values. Without the
    declaration the search steps the records as they are and reads what the episode will draw."""
    states = positions(gamble, 32)
    assert len(set(states["rng"].tolist())) == 32
    search = MCTS(gamble, 64, selection="puct")
    result = search.search(states, seed=np.full(32, 5, dtype=np.uint64))
    assert (result.qvalues == result.qvalues[0]).all() and (result.action == result.action[0]).all()
    assert not registry.chance(peeking)
    states = positions(peeking, 32)
    result = MCTS(peeking, 64, selection="puct").search(states, seed=np.full(32, 5, np.uint64))
    wins = result.qvalues[:, 1]
    assert set(np.unique(wins)) == {0.0, 1.0}  # each search knew its episode's draw
    assert (result.action[wins == 1.0] == 1).all()


def test_the_search_values_a_gamble_by_its_expectation(gamble):
    """The chance node of the gamble holds outcomes drawn by the search: its value is their
    mean, near 0.4, below the sure 0.5, in every position."""
    states = positions(gamble, 16)
    search = MCTS(gamble, 400, selection="puct", chance_widening=1.0)
    result = search.search(states, seed=11)
    assert (result.action == 0).all()
    assert np.allclose(result.qvalues[:, 0], 0.5)
    # Each visit of the gamble drew an outcome of its own: a binomial mean of its visits.
    visits = result.visit_counts[:, 1]
    z = np.abs(result.qvalues[:, 1] - 0.4) / np.sqrt(0.24 / visits)
    assert (visits >= 3).all() and z.max() < 4.0, (visits, result.qvalues[:, 1])
    mean = (result.qvalues[:, 1] * visits).sum() / visits.sum()
    assert abs(mean - 0.4) < 4.0 * np.sqrt(0.24 / visits.sum())
    nodes = search._tree[0]
    children = search._tree[1]
    for t in range(16):
        x = children[t, 0, 1]  # the gamble's chance node
        assert nodes[t, x]["chance"] and not nodes[t, children[t, 0, 0]]["chance"]
        outcomes, o = 0, children[t, x, 0]
        while o >= 0:
            assert nodes[t, o]["parent"] == x and nodes[t, o]["terminal"]
            outcomes += 1
            o = nodes[t, o]["sibling"]
        assert outcomes == nodes[t, x]["visits"]  # widening 1: a new outcome each visit


@pytest.mark.parametrize(("widening", "most"), [(0.0, 1), (0.5, 15)])
def test_progressive_widening_bounds_the_outcomes(gamble, widening, most):
    search = MCTS(gamble, 200, selection="uct", chance_widening=widening, rounds=3)
    search.search(positions(gamble, 2, rounds=3), seed=1)
    nodes, children = search._tree[0], search._tree[1]
    for t in range(2):
        chance = np.flatnonzero(nodes[t]["chance"] & (nodes[t]["visits"] > 0))
        assert chance.size > 1
        for x in chance:
            count, o = 0, children[t, x, 0]
            while o >= 0:
                count += 1
                o = nodes[t, o]["sibling"]
            visits = nodes[t, x]["visits"]
            assert 1 <= count <= min(most, np.ceil(visits**widening))


def test_a_chance_game_searches_as_deep_with_twice_the_nodes(gamble):
    plain = MCTS(gamble, 50)
    assert plain._nodes == 101  # a chance node and an outcome a simulation at most
    assert NODE.fields["chance"] and NODE.fields["sibling"]


def test_every_bundled_game_declares_the_chance_its_step_draws():
    assert registry.chance("game_2048") and registry.chance("minatar_breakout")
    assert not registry.chance("connectx") and not registry.chance("go")


def test_the_contract_check_fails_a_step_that_draws_undeclared(peeking):
    with pytest.raises(testing.CheckFailed, match="declare CHANCE"):
        testing.check_chance(peeking)
    assert "declares CHANCE; step drew in 320" in testing.check_chance("game_2048")


def test_2048_searches_its_tiles_under_chance_nodes():
    engine = vecenv.make("game_2048", num_envs=4, seed=2)
    search = MCTS("game_2048", 100, selection="puct")
    result = search.search(engine.get_state(), seed=0)
    assert result.searched.all() and (result.visit_counts.sum(axis=1) == 100).all()
    legal = engine.obs["legal"].reshape(4, -1)
    assert legal[np.arange(4), result.action].all()
    nodes = search._tree[0]
    assert nodes["chance"][:, :201].sum() > 0  # every legal move of 2048 places a tile
    again = engine.get_state()
    again["rng"] += np.uint64(12345)  # another future for each episode: the same search
    other = search.search(again, seed=0)
    np.testing.assert_array_equal(other.visit_counts, result.visit_counts)
    np.testing.assert_array_equal(other.qvalues, result.qvalues)
