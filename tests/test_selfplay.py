"""The batched match runner: results, reproducibility, Python policies, replays, bad input."""

import numpy as np
import pytest

from vecenv import selfplay
from vecenv.kernels.turns import DONE, INVALID, STATUS_NAMES


def lowest_open_column(obs, legal):
    """A batched policy: the first legal column of every match."""
    return np.argmax(legal, axis=1).astype(np.int64)


@pytest.mark.parametrize(
    "game,agents",
    [
        ("connectx", ("negamax", "random")),
        ("tictactoe", ("reaction", "random")),
        ("rps", ("statistical", "copy_opponent")),
    ],
)
def test_results_are_consistent(game, agents):
    config = {"episodeSteps": 40} if game == "rps" else {}
    r = selfplay.play(game, agents, 64, seed=5, **config)
    s = r.summary
    assert s.wins + s.draws + s.losses == 64 == r.rewards.shape[0]
    assert s.win_rate[1] <= s.win_rate[0] <= s.win_rate[2]
    assert (r.statuses == DONE).all()  # built-in agents only play legal moves
    # Seats alternate: A moves first in even matches.
    assert (r.seats == np.arange(64) % 2).all()
    wins = (r.rewards[:, 0] > r.rewards[:, 1]).sum()
    assert wins == s.wins
    assert "matches" in str(s)


def test_negamax_beats_random_most_of_the_time():
    r = selfplay.play("connectx", ("negamax", "random"), 200, seed=1)
    assert r.summary.win_rate[1] > 0.8


def test_same_seed_same_matches_for_any_threads_and_batch_split():
    a = selfplay.play("connectx", ("negamax", "random"), 40, seed=9, keep_actions=True)
    b = selfplay.play("connectx", ("negamax", "random"), 40, seed=9, num_threads=2)
    c = selfplay.play("connectx", ("negamax", "random"), 20, seed=9, keep_actions=True)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    np.testing.assert_array_equal(a.plies, b.plies)
    np.testing.assert_array_equal(a.rewards[:20], c.rewards)
    np.testing.assert_array_equal(a.actions[: c.actions.shape[0], :20], c.actions)
    d = selfplay.play("connectx", ("negamax", "random"), 40, seed=10)
    assert not np.array_equal(a.plies, d.plies)


def test_python_policy_plays_its_seat():
    r = selfplay.play("connectx", (lowest_open_column, "random"), 30, seed=2, keep_actions=True)
    assert r.agents[0] == "lowest_open_column"
    assert (r.statuses == DONE).all()
    # In every match, policy A's moves are the lowest open column of the board it saw.
    env = r.replay(0)
    for before, after in zip(env.steps, env.steps[1:], strict=False):
        seat = int(r.seats[0])
        if before[seat].status == "ACTIVE":
            board = before[0].observation.board
            assert after[seat].action == next(c for c in range(7) if board[c] == 0)


def test_a_bad_move_in_one_match_leaves_the_others_alone():
    def bad_in_match_3(obs, legal):
        out = lowest_open_column(obs, legal)
        out[3] = 99
        return out

    good = selfplay.play("connectx", (lowest_open_column, "random"), 8, seed=4)
    bad = selfplay.play("connectx", (bad_in_match_3, "random"), 8, seed=4)
    assert STATUS_NAMES[bad.statuses[3, 0]] == "INVALID" and bad.statuses[3, 1] == DONE
    assert bad.rewards[3, 0] == -1
    others = np.arange(8) != 3
    np.testing.assert_array_equal(good.rewards[others], bad.rewards[others])
    np.testing.assert_array_equal(good.statuses[others], bad.statuses[others])
    assert INVALID not in good.statuses


def test_policy_returning_the_wrong_shape_is_an_error():
    with pytest.raises(ValueError, match="must return"):
        selfplay.play("connectx", (lambda obs, legal: 3, "random"), 4, seed=0)


def test_replay_reproduces_the_match():
    r = selfplay.play("tictactoe", ("reaction", "random"), 10, seed=3, keep_actions=True)
    for match in range(10):
        env = r.replay(match)
        a, b = int(r.seats[match]), 1 - int(r.seats[match])
        assert [s.reward for s in env.state] == [
            r.rewards[match, 0] if a == 0 else r.rewards[match, 1],
            r.rewards[match, 1] if b == 1 else r.rewards[match, 0],
        ]
        assert len(env.steps) - 1 == r.plies[match]
        assert "vecenvReplay" in env.render(mode="html")


def test_replay_needs_the_actions():
    r = selfplay.play("tictactoe", ("reaction", "random"), 2, seed=3)
    with pytest.raises(ValueError, match="keep_actions"):
        r.replay(0)


@pytest.mark.parametrize(
    "args,match",
    [
        (("connectx", ("negamx", "random"), 4), "unknown agent"),
        (("cartpole", ("random", "random"), 4), "not a two-agent game"),
        (("connectx", ("random",), 4), "two agents"),
        (("connectx", ("random", "random"), 0), "positive integer"),
        (("connectx", ("random", 3), 4), "built-in name or a callable"),
    ],
)
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        selfplay.play(*args)


def test_bad_seed():
    with pytest.raises(ValueError, match="seed"):
        selfplay.play("connectx", ("random", "random"), 2, seed=-1)


def test_wilson_interval():
    low, high = selfplay.wilson(50, 100)
    assert low < 0.5 < high and high - low == pytest.approx(0.19, abs=0.01)
    assert selfplay.wilson(0, 10)[0] == 0.0 and selfplay.wilson(10, 10)[1] == pytest.approx(1.0)
