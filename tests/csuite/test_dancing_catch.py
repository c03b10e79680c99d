"""DancingCatch against csuite's rules: Catch's falling balls and scoring, the swap schedule of the
observation's permutation, the observation read through it, and frames. What it shares with
WindyCatch (the start, the paddle, spawns, state checks, random input, the gym face) is checked in
test_catch_variants.py.

Expected values are derived by hand from csuite's ``dancing_catch.py``; random draws are checked
for their distributions, since the streams are not numpy's.
"""

import numpy as np
import pytest

import vecenv

from . import helpers
from .helpers import STAY, balls_of, step

GAME = "dancing_catch"


def make(num_envs=1, seed=0, **config):
    return vecenv.make(GAME, num_envs=num_envs, seed=seed, **config)


def put(engine, i=0, shuffle=None, time=None, **board):
    """Set episode i's paddle column, {row: column} balls, permutation and time since a swap."""
    helpers.put(engine, i, shuffle_idx=shuffle, time_since_swap=time, **board)


def board(rows, columns, paddle_x, balls):
    """Catch's board row by row: the observation before it is shuffled."""
    return helpers.board(rows, columns, paddle_x, balls).ravel()


# -- catch's rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ball, paddle, action, reward",
    [(2, 2, STAY, 1.0), (2, 3, STAY, -1.0), (3, 2, 2, 1.0), (1, 2, 0, 1.0), (2, 2, 0, -1.0)],
)
def test_ball_reaching_the_paddle_row_scores_after_the_paddle_moves(ball, paddle, action, reward):
    e = make(spawn_probability=0.0)
    put(e, paddle_x=paddle, balls={8: ball, 3: 4})
    obs, rewards = step(e, action)
    assert rewards[0] == reward
    assert balls_of(e) == {4: 4}  # the scored ball left; the other fell straight down
    assert obs[0][45:50].sum() == 1


def test_balls_fall_straight_down_and_only_landings_score():
    e = make(spawn_probability=0.0)
    put(e, paddle_x=0, balls={0: 1, 4: 3, 7: 0})
    _, rewards = step(e, STAY)
    assert rewards[0] == 0.0 and balls_of(e) == {1: 1, 5: 3, 8: 0}
    _, rewards = step(e, STAY)
    assert rewards[0] == 1.0 and balls_of(e) == {2: 1, 6: 3}


# -- the observation's permutation -------------------------------------------------------------


def test_observation_reads_the_board_through_shuffle_idx():
    e = make(spawn_probability=0.0)
    shuffle = np.arange(50)[::-1].copy()
    put(e, paddle_x=1, balls={2: 3}, shuffle=shuffle)
    flat = board(10, 5, 1, {2: 3})
    np.testing.assert_array_equal(e.obs["board"][0, 0], flat[shuffle])
    # The paddle's cell 46 shows at entry 3, the ball's cell 13 at entry 36.
    assert np.flatnonzero(e.obs["board"][0, 0]).tolist() == [3, 36]
    obs, _ = step(e, 2)
    np.testing.assert_array_equal(obs[0], board(10, 5, 2, {3: 3})[shuffle])


def test_repeated_indices_show_the_same_cell_twice():
    """csuite accepts any indices into the board, not only permutations."""
    e = make(spawn_probability=0.0)
    shuffle = np.full(50, 47)
    put(e, paddle_x=2, balls={}, shuffle=shuffle)
    assert (e.obs["board"][0, 0] == 1).all()


def test_swap_happens_every_swap_every_steps():
    e = make(num_envs=300, seed=2, spawn_probability=0.0, swap_every=3)
    ident = np.arange(50)
    for k in (1, 2):
        step(e, *([STAY] * 300))
        assert (e.states["time_since_swap"] == k).all()
        assert (e.states["shuffle_idx"] == ident).all()
    step(e, *([STAY] * 300))
    assert (e.states["time_since_swap"] == 0).all()
    changed = (e.states["shuffle_idx"] != ident).sum(axis=1)
    # Two entries swapped, or none when both draws named the same entry (1 in 50).
    assert set(changed.tolist()) <= {0, 2}
    assert (changed == 2).mean() > 0.9
    for idx in e.states["shuffle_idx"]:
        assert sorted(idx.tolist()) == ident.tolist()
        moved = np.flatnonzero(idx != ident)
        if moved.size:
            a, b = moved
            assert idx[a] == b and idx[b] == a


def test_the_swapping_step_observes_through_the_new_permutation():
    e = make(num_envs=50, seed=8, spawn_probability=0.0, swap_every=1)
    for i in range(50):
        put(e, i, paddle_x=0, balls={4: 2})
    obs, _ = step(e, *([STAY] * 50))
    flat = board(10, 5, 0, {5: 2})
    for i in range(50):
        np.testing.assert_array_equal(obs[i], flat[e.states["shuffle_idx"][i]])


def test_swap_time_past_the_period_uses_csuite_modulo():
    e = make(spawn_probability=0.0, swap_every=4)
    put(e, time=5)
    step(e, STAY)
    assert e.states["time_since_swap"][0] == 6
    step(e, STAY)
    assert e.states["time_since_swap"][0] == 7
    step(e, STAY)
    assert e.states["time_since_swap"][0] == 0


def test_swapped_entries_are_uniform_and_independent():
    n, cells = 20000, 50
    e = make(num_envs=n, seed=13, spawn_probability=0.0, swap_every=1)
    step(e, *([STAY] * n))
    ident = np.arange(cells)
    moved = e.states["shuffle_idx"] != ident
    same = (moved.sum(axis=1) == 0).mean()
    # Both draws alike with probability 1/50.
    assert abs(same - 1 / cells) < 0.006, same
    # Each entry takes part in a real swap with probability 2/50 * 49/50 (about 784 of 20000,
    # standard deviation about 27).
    per_entry = moved.sum(axis=0)
    want = n * 2 / cells * (cells - 1) / cells
    assert (np.abs(per_entry - want) < 160).all(), per_entry
    # The pairs: no preference for near or far entries.
    pairs = np.sort(np.array([np.flatnonzero(m) for m in moved if m.any()]), axis=1)
    gaps = pairs[:, 1] - pairs[:, 0]
    # For two distinct uniform entries of 50 the mean gap is 51/3 = 17.
    assert abs(gaps.mean() - 17.0) < 0.6, gaps.mean()


# -- frames ------------------------------------------------------------------------------------


def test_frame_is_the_shuffled_observation_as_a_board():
    e = make(spawn_probability=0.0)
    shuffle = np.arange(50)
    shuffle[[0, 46]] = shuffle[[46, 0]]  # the paddle's cell shows in the top-left corner
    put(e, paddle_x=1, balls={3: 4}, shuffle=shuffle)
    frame = e.render(0)
    assert frame.shape == (10, 5, 3) and frame.dtype == np.uint8
    cells = np.zeros((10, 5), dtype=np.uint8)
    cells[0, 0] = cells[3, 4] = 1
    for channel in range(3):
        np.testing.assert_array_equal(frame[:, :, channel], cells * 255)
    assert e.render(0, "ansi").splitlines()[:4] == ["#....", ".....", ".....", "....#"]
