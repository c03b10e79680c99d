"""``vecenv.pettingzoo`` under PettingZoo's own tests (api_test, parallel_api_test, seed_test,
max_cycles_test) for every game of several agents, and beside the Kaggle face move for move."""

import types
import warnings

import numpy as np
import pytest

from tests.envs.aec_beside_kaggle import play_aec_beside_kaggle
from vecenv import registry
from vecenv.kernels.position import PositionError

pettingzoo_test = pytest.importorskip("pettingzoo.test", reason="PettingZoo is a test extra")
vp = pytest.importorskip("vecenv.pettingzoo")

MULTI_AGENT = [n for n, s in registry.specs().items() if s.num_agents > 1]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        # PettingZoo's tests advise Box observations; ours are Dicts of the game's fields.
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize("game", MULTI_AGENT)
def test_pettingzoos_own_tests_pass(game):
    pettingzoo_test.api_test(vp.env(game), num_cycles=300)
    pettingzoo_test.parallel_api_test(vp.parallel_env(game), num_cycles=300)
    pettingzoo_test.seed_test(lambda: vp.env(game), num_cycles=30)


def test_max_cycles_truncates_a_simultaneous_game():
    # (A turn-based game may end by its rules before max_cycles, which this test does not allow.)
    module = types.SimpleNamespace(
        env=lambda **kw: vp.env("rps", **kw), parallel_env=lambda **kw: vp.parallel_env("rps", **kw)
    )
    pettingzoo_test.max_cycles_test(module)


@pytest.mark.parametrize("game", ["connectx", "tictactoe", "othello"])
def test_a_game_through_aec_is_the_kaggle_faces(game):
    for seed in range(5):
        assert play_aec_beside_kaggle(game, seed) > 0


def test_rewards_terminations_and_masks_follow_the_rules():
    env = vp.env("connectx", rows=4, columns=5, inarow=3)
    env.reset(options={"position": {"observation": {"board": [1, 2, 0, 0, 0] * 4}}})
    assert env.agent_selection == "player_0"
    np.testing.assert_array_equal(env.observe("player_0")["action_mask"], [0, 0, 1, 1, 1])
    assert not env.observe("player_1")["action_mask"].any()  # not its turn
    np.testing.assert_array_equal(env.state(), [1, 2, 0, 0, 0] * 4)
    env.step(0)  # a full column: INVALID
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": -1.0, "player_1": 0.0}
    other = vp.env("tictactoe")
    other.reset()
    with pytest.raises(ValueError, match="outside"):
        other.step(9)


def test_the_parallel_face_ignores_the_idle_agents_action():
    env = vp.parallel_env("tictactoe")
    env.reset(seed=0)
    observations, rewards, terminated, _, _ = env.step({"player_0": 4, "player_1": 8})
    board = observations["player_0"]["observation"]["board"]
    assert board[4] == 1 and board[8] == 0  # player_1 was not to move
    assert observations["player_1"]["action_mask"][4] == 0


def test_simultaneous_moves_step_the_engine_once_both_acted():
    env = vp.env("rps", episodeSteps=5, render_mode="ansi")
    env.reset(seed=0)
    env.step(0)  # rock
    assert env.agent_selection == "player_1" and env.engine.states["step"][0] == 0
    env.step(1)  # paper
    assert env.engine.states["step"][0] == 1
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}
    assert env.observe("player_0")["observation"]["lastOpponentAction"] == 1
    assert "Round" in env.render()


def test_a_bad_position_or_one_agent_game_is_refused():
    with pytest.raises(ValueError, match="one-agent game"):
        vp.env("cartpole")
    env = vp.env("tictactoe")
    with pytest.raises(PositionError):
        env.reset(options={"position": {"observation": {"board": [7] * 9}}})


@pytest.mark.parametrize(
    "game, actions, missing",
    [
        ("connectx", {"player_1": 3}, "player_0"),
        ("connectx", {}, "player_0"),
        ("rps", {"player_0": 1}, "player_1"),
        ("rps", {}, "player_0, player_1"),
    ],
)
def test_the_parallel_face_refuses_a_missing_action_of_an_agent_to_move(game, actions, missing):
    env = vp.parallel_env(game)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=f"no action for {missing}"):
        env.step(actions)
    assert env.engine.states["step"][0] == 0  # nothing was played


@pytest.mark.parametrize("action", [True, False, np.bool_(True), np.array(True)])
def test_both_faces_refuse_a_bool_for_a_move(action):
    parallel = vp.parallel_env("connectx")
    parallel.reset(seed=0)
    with pytest.raises(TypeError, match="player_0's action must be an integer"):
        parallel.step({"player_0": action, "player_1": 0})
    aec = vp.env("rps")
    aec.reset(seed=0)
    with pytest.raises(TypeError, match="player_0's action must be an integer"):
        aec.step(action)
    assert parallel.engine.states["step"][0] == 0 and aec.engine.states["step"][0] == 0
