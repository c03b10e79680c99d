"""Bridge bidding, a game of four agents, through the faces and tools: Kaggle's runs, PettingZoo's
AEC and Parallel, Gymnasium against three opponents, self-play with one agent a seat, the command
line, pickling; and the faces two-player by nature refusing it in one line. The rules are
tests/envs/test_bridge_bidding.py's; what each agent sees, through every face,
tests/test_hidden_information.py's."""

import pickle
import random

import gymnasium
import numpy as np
import pytest

import vecenv
from tests.kaggle import test_html_replay
from vecenv import aisys, kaggle, pettingzoo, selfplay, testing
from vecenv.cli import main
from vecenv.gym.env import GameEnv
from vecenv.kernels.turns import DONE

GAME = "bridge_bidding"
WARM = [(GAME, {})]  # compiled beside the tests before they start (tests/warmup.py)
open_page = test_html_replay.open_page  # the replay page tests' fixture (``browser``: conftest)


def passer(obs, legal):
    """A batched Python policy: always pass (action 0, always legal)."""
    return np.zeros(len(legal), dtype=np.int64)


def test_a_kaggle_run_of_four_random_agents_ends_with_opposite_scores():
    random.seed(1)
    env = kaggle.make(GAME)
    env.run(["random"] * 4)
    assert [s.status for s in env.state] == ["DONE"] * 4
    rewards = [s.reward for s in env.state]
    assert sum(rewards) == 0  # the declaring side's score, the other side's its negation
    assert [sum(s.observation.hand) for s in env.state] == [13] * 4
    assert "auction:" in env.render(mode="ansi")


def test_the_replay_page_draws_the_four_hands_the_auction_and_the_outcome(open_page):
    from vecenv.kaggle.html import game_js, replay_page

    random.seed(2)
    env = kaggle.make(GAME)
    env.run(["random"] * 4)
    data = env.toJSON()
    last = len(data["steps"]) - 1
    opened = open_page(replay_page(game_js(GAME), {"environment": data, "step": last}))
    state = opened.show(last)
    assert state["status"].count("Player") == 4 and opened.errors == []  # each agent's score
    assert len(state["layout"]["rows"]) == 4
    img, _ = opened.canvas_pixels()
    pixels = np.asarray(img)
    assert (pixels == (0xFA, 0xFA, 0xF5)).all(axis=-1).sum() > 200  # the hands' and calls' text


def test_pettingzoo_plays_four_agents_to_the_end():
    env = pettingzoo.env(GAME)
    env.reset(seed=3)
    assert env.possible_agents == [f"player_{k}" for k in range(4)]
    rng = random.Random(0)
    movers = set()
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        movers.add(agent)
        mask = observation["action_mask"]
        env.step(0 if len(movers) == 4 else rng.choice(np.flatnonzero(mask[3:]).tolist()) + 3)
    assert len(movers) == 4 and not env.agents
    observations, _ = pettingzoo.parallel_env(GAME).reset(seed=3)
    assert len(observations) == 4


@pytest.mark.parametrize("seat", [0, 3])
def test_gymnasium_plays_the_learner_against_three_opponents(seat):
    env = GameEnv(game=GAME, seat=seat, opponent="random")
    obs, _ = env.reset(seed=seat)
    assert obs["hand"].sum() == 13 and obs["mark"] == seat + 1
    done = False
    while not done:
        assert obs["turn"] == seat + 1 and obs["legal"][0]  # the learner calls; pass is legal
        obs, reward, terminated, truncated, _ = env.step(0)
        done = terminated or truncated
    vector = gymnasium.make_vec("vecenv/BridgeBidding-v0", num_envs=2)
    first, _ = vector.reset(seed=0)
    assert first["features"].shape == (2, 480)


def test_self_play_seats_one_agent_a_seat_and_is_deterministic():
    agents = ("random", passer, "random", "random")
    result = selfplay.play(GAME, agents, 24, seed=4)
    assert result.rewards.shape == (24, 4) and (result.statuses == DONE).all()
    np.testing.assert_array_equal(result.rewards.sum(axis=1), 0)
    again = selfplay.play(GAME, agents, 24, seed=4, num_threads=2)
    np.testing.assert_array_equal(again.rewards, result.rewards)
    with pytest.raises(ValueError, match="agents must be 4 agents for bridge_bidding"):
        selfplay.play(GAME, ("random", "random"), 2)


def test_the_command_line_plays_it_and_the_search_and_aisys_refuse_it(capsys):
    assert main(["play", GAME, "--agents", *["random"] * 4, "--matches", "8"]) == 0
    assert "random vs random vs random vs random: 8 matches" in capsys.readouterr().out
    with pytest.raises(ValueError, match="bridge_bidding has hidden information"):
        selfplay.play(GAME, ("mcts", "random", "random", "random"), 2)
    with pytest.raises(ValueError, match="bridge_bidding has 4 agents"):
        aisys.environment_class(GAME)


def test_a_pickled_engine_plays_on_alike():
    e = vecenv.make(GAME, num_envs=8, seed=2)
    rng = np.random.default_rng(0)
    for _ in range(3):
        e.step(testing.legal_actions(e, rng))
    copy = pickle.loads(pickle.dumps(e))
    for _ in range(6):
        a = testing.legal_actions(e, rng)
        e.step(a)
        copy.step(a)
        np.testing.assert_array_equal(copy.get_state(), e.get_state())
