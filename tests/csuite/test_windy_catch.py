"""WindyCatch against csuite's rules: wind shifts and wraps, scoring after the wind, the wind's
schedule, the observation's layout and frames. What it shares with DancingCatch (the start, the
paddle, spawns, state checks, random input, the gym face) is checked in test_catch_variants.py.

Expected values are derived by hand from csuite's ``windy_catch.py``; random draws are checked
for their distributions, since the streams are not numpy's.
"""

import numpy as np
import pytest

import vecenv

from . import helpers
from .helpers import STAY, balls_of, one_hot, step, windy_observation

GAME = "windy_catch"
NONE, LEFT, RIGHT = 0, 1, 2  # the wind's one-hot positions


def make(num_envs=1, seed=0, **config):
    return vecenv.make(GAME, num_envs=num_envs, seed=seed, **config)


def put(engine, i=0, wind=None, time=None, **board):
    """Set episode i's paddle column, {row: column} balls, wind and time since the wind changed."""
    wind_direction = None if wind is None else one_hot(wind)
    helpers.put(engine, i, wind_direction=wind_direction, time_since_wind_change=time, **board)


# -- wind --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wind, column, moved",
    [(NONE, 2, 2), (LEFT, 2, 1), (RIGHT, 2, 3), (LEFT, 0, 4), (RIGHT, 4, 0), (NONE, 0, 0)],
)
def test_wind_shifts_falling_balls_and_wraps(wind, column, moved):
    e = make(spawn_probability=0.0)
    put(e, balls={3: column}, wind=wind)
    obs, rewards = step(e, STAY)
    assert balls_of(e) == {4: moved}
    assert rewards[0] == 0.0
    np.testing.assert_array_equal(obs[0], windy_observation(10, 5, 2, {4: moved}, wind))


def test_every_ball_falls_and_drifts_together():
    e = make(spawn_probability=0.0)
    put(e, balls={0: 4, 2: 0, 5: 3, 7: 1}, wind=RIGHT)
    step(e, STAY)
    assert balls_of(e) == {1: 0, 3: 1, 6: 4, 8: 2}
    step(e, STAY)
    # The ball in row 8 reached the paddle's row in column 3 (the paddle is in 2): missed, removed.
    assert balls_of(e) == {2: 1, 4: 2, 7: 0}
    assert e.rewards[0, 0] == -1.0


def test_one_column_board_wraps_onto_itself():
    e = make(columns=1, rows=3, spawn_probability=0.0)
    for wind in (NONE, LEFT, RIGHT):
        put(e, paddle_x=0, balls={0: 0}, wind=wind)
        step(e, 0)
        assert balls_of(e) == {1: 0}
        _, rewards = step(e, 2)
        assert rewards[0] == 1.0 and balls_of(e) == {}


# -- scoring -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wind, ball, paddle, action, reward",
    [
        (NONE, 2, 2, STAY, 1.0),
        (NONE, 2, 3, STAY, -1.0),
        (NONE, 3, 2, 2, 1.0),  # the paddle moves before the ball is scored
        (LEFT, 3, 2, STAY, 1.0),  # the wind moves the ball before it is scored
        (LEFT, 2, 2, STAY, -1.0),
        (RIGHT, 1, 2, STAY, 1.0),
        (RIGHT, 4, 0, STAY, 1.0),  # blown across the right edge onto the paddle in column 0
        (LEFT, 0, 4, STAY, 1.0),
        (LEFT, 0, 0, STAY, -1.0),
        (RIGHT, 3, 4, 0, -1.0),  # blown to 4 while the paddle left 4 for 3
    ],
)
def test_ball_reaching_the_paddle_row_scores(wind, ball, paddle, action, reward):
    e = make(spawn_probability=0.0)
    put(e, paddle_x=paddle, balls={8: ball, 4: 1}, wind=wind)
    obs, rewards = step(e, action)
    assert rewards[0] == reward
    shifted = (1 + (0, -1, 1)[wind]) % 5
    # Scored balls leave at once: the paddle's row shows only the paddle.
    assert balls_of(e) == {5: shifted}
    assert obs[0][45:50].sum() == 1


def test_no_reward_without_a_ball_landing():
    e = make(spawn_probability=0.0)
    put(e, balls={7: 2})
    _, rewards = step(e, STAY)
    assert rewards[0] == 0.0 and balls_of(e) == {8: 2}


def test_a_full_column_is_caught_ball_after_ball():
    e = make(spawn_probability=0.0)
    put(e, paddle_x=2, balls={r: 2 for r in range(9)}, wind=NONE)
    total = 0.0
    for _ in range(9):
        _, rewards = step(e, STAY)
        total += rewards[0]
    assert total == 9.0 and balls_of(e) == {}


# -- the wind's schedule -----------------------------------------------------------------------


def test_wind_keeps_still_until_change_every_steps():
    e = make(spawn_probability=0.0, change_every=4)
    put(e, wind=LEFT, time=0)
    for k in range(1, 4):
        step(e, STAY)
        assert e.states["time_since_wind_change"][0] == k
        assert (e.states["wind_direction"][0] == one_hot(LEFT)).all()
    step(e, STAY)
    assert e.states["time_since_wind_change"][0] == 0
    assert e.states["wind_direction"][0].sum() == 1


def test_the_changing_step_still_blows_with_the_old_wind():
    e = make(num_envs=200, seed=1, spawn_probability=0.0, change_every=2)
    for i in range(200):
        put(e, i, balls={2: 2}, wind=RIGHT, time=1)
    step(e, *([STAY] * 200))
    assert (e.states["balls"][:, 3] == 3).all()
    assert (e.states["time_since_wind_change"] == 0).all()


def test_time_past_the_period_uses_csuite_modulo():
    """csuite changes the wind when (time + 1) % change_every == 0, so a restored time beyond the
    period waits for the next multiple."""
    e = make(spawn_probability=0.0, change_every=3)
    put(e, wind=LEFT, time=4)
    step(e, STAY)
    assert e.states["time_since_wind_change"][0] == 5
    assert (e.states["wind_direction"][0] == one_hot(LEFT)).all()
    step(e, STAY)
    assert e.states["time_since_wind_change"][0] == 0


def test_new_wind_is_uniform_over_the_three_including_the_old():
    n = 6000
    e = make(num_envs=n, seed=7, change_every=1)
    step(e, *([STAY] * n))
    winds = e.states["wind_direction"].argmax(axis=1)
    counts = np.bincount(winds, minlength=3)
    # 2000 each (staying windless included), standard deviation about 37.
    assert (np.abs(counts - 2000) < 200).all(), counts
    # Redrawn every step with change_every=1: consecutive winds are independent.
    step(e, *([STAY] * n))
    again = e.states["wind_direction"].argmax(axis=1)
    assert abs((again == winds).mean() - 1 / 3) < 0.04


# -- frames ------------------------------------------------------------------------------------


def test_frame_is_csuite_board_with_wind_header():
    e = make(spawn_probability=0.0)
    put(e, paddle_x=1, balls={0: 4, 6: 2}, wind=RIGHT)
    frame = e.render(0)
    assert frame.shape == (12, 5, 3) and frame.dtype == np.uint8
    cells = np.zeros((12, 5), dtype=np.uint8)
    cells[9, 1] = cells[0, 4] = cells[6, 2] = 1
    cells[10] = [1, 0, 0, 1, 1]  # header: ones, with the three wind bits in columns 1..3
    cells[11] = 1
    for channel in range(3):
        np.testing.assert_array_equal(frame[:, :, channel], cells * 255)
    put(e, wind=NONE)
    np.testing.assert_array_equal(e.render(0)[10, :, 0], [255, 255, 0, 0, 255])


def test_frame_of_a_narrow_board_still_shows_the_wind():
    e = make(columns=2, rows=3)
    put(e, wind=LEFT)
    frame = e.render(0)
    assert frame.shape == (5, 3, 3)
    np.testing.assert_array_equal(frame[3, :, 0], [0, 255, 0])


def test_text_frame():
    e = make(spawn_probability=0.0, rows=3, columns=4)
    put(e, paddle_x=0, balls={1: 3}, wind=LEFT)
    assert e.render(0, "ansi") == "....\n...o\n=...\nwind: left"
