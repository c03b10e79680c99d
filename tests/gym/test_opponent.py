"""Two-agent games through the single-agent Gymnasium faces, against an opponent."""

import gymnasium
import numpy as np
import pytest

import vecenv  # noqa: F401 (registers the ids)
from tests.kaggle import reference
from vecenv.kernels.turns import INVALID
from vecenv.opponent import OpponentEngine


def lowest_open(obs, legal):
    return np.argmax(legal, axis=1).astype(np.int64)


def test_second_seat_sees_the_opening_move():
    env = gymnasium.make("vecenv/ConnectX-v0", opponent="random", seat=1)
    obs, _ = env.reset(seed=4)
    assert obs["mark"] == 2
    assert (obs["board"] == 1).sum() == 1 and (obs["board"] == 2).sum() == 0


def test_an_invalid_move_loses_as_kaggle_rules_it():
    # The default board (compiled already; each other shape compiles its own drivers).
    engine = OpponentEngine("connectx", num_envs=1, seed=0, opponent=lowest_open)
    # Fill column 0: each of our checkers is answered by the opponent's in the lowest open
    # column, 0 again, so three moves fill its six cells.
    for _ in range(3):
        engine.step(np.array([0]))
        assert not engine.terminated[0]
    assert engine.obs["board"][0, 0] != 0
    _, rewards, terminated, _ = engine.step(np.array([0]))  # column 0 is full
    assert terminated[0] and rewards[0, 0] == -1.0
    assert engine.states["status"][0, 0] == INVALID


def test_win_and_loss_rewards():
    # We play column 3 every time; the opponent plays the lowest open column (0): we win.
    engine = OpponentEngine("connectx", num_envs=1, seed=0, opponent=lowest_open)
    total, steps = 0.0, 0
    while True:
        _, r, term, trunc = engine.step(np.array([3]))
        total += r[0, 0]
        steps += 1
        if term[0] or trunc[0]:
            break
    assert (total, steps) == (1.0, 4)
    # As the second seat, the same opponent wins along the bottom row... of column 0 first.
    engine = OpponentEngine("connectx", num_envs=1, seed=0, opponent=lowest_open, seat=1)
    total = 0.0
    for _ in range(3):
        _, r, term, _ = engine.step(np.array([6]))
        total += r[0, 0]
    assert term[0] and total == -1.0


@pytest.mark.parametrize("seat", [0, 1])
def test_same_as_kaggle_train(seat):
    """Our Env against a policy equals Kaggle's ``train`` against the same policy: the same
    observations and rewards at every step."""
    rng = np.random.default_rng(seat)

    def kaggle_opponent(obs, config):
        return next(c for c in range(config.columns) if obs.board[c] == 0)

    for _ in range(5):
        kenv = reference.make("connectx", debug=True)
        trainer = kenv.train([None, kaggle_opponent] if seat == 0 else [kaggle_opponent, None])
        kobs = trainer.reset()
        env = gymnasium.make("vecenv/ConnectX-v0", opponent=lowest_open, seat=seat)
        obs, _ = env.reset(seed=0)
        # Kaggle sets shared fields by key only: read them by key.
        assert obs["board"].tolist() == kobs["board"] and int(obs["mark"]) == kobs["mark"]
        done = False
        while not done:
            action = int(rng.integers(7))
            kobs, kreward, kdone, _ = trainer.step(action)
            obs, reward, term, trunc, _ = env.step(action)
            assert obs["board"].tolist() == kobs["board"]
            expected = -1.0 if kreward is None else kreward
            assert reward == expected
            done = term or trunc
            assert done == kdone


def test_rps_opponent_moves_at_the_same_time():
    env = gymnasium.make("vecenv/RockPaperScissors-v0", opponent="rock", episodeSteps=10)
    env.reset(seed=0)
    rewards = [env.step(1)[1] for _ in range(8)]  # paper beats rock every round
    assert rewards[:7] == [1.0] * 7


def test_bad_opponent_and_seat():
    with pytest.raises(ValueError, match="unknown agent"):
        OpponentEngine("connectx", opponent="negamx")
    with pytest.raises(ValueError, match="seat"):
        OpponentEngine("connectx", seat=2)
    with pytest.raises(ValueError, match="one-agent game"):
        gymnasium.make("vecenv/CartPole-v1", opponent="random")
    engine = OpponentEngine("connectx", num_envs=2)
    with pytest.raises(ValueError, match="out of range"):
        engine.step(np.array([0, 7]))
    with pytest.raises(ValueError, match="shape"):
        engine.step(np.array([0, 1, 2]))
