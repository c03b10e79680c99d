"""WindyCatch against csuite's rules: paddle moves, wind shifts and wraps, scoring after the wind,
spawns, the wind's schedule, the observation's layout, state checks, frames and the gym face.

Expected values are derived by hand from csuite's ``windy_catch.py``; random draws are checked
for their distributions, since the streams are not numpy's.
"""

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv

GAME = "windy_catch"
NONE, LEFT, RIGHT = 0, 1, 2  # the wind's one-hot positions
STAY = 1
# A few board sizes (each compiles its own kernels): the smallest, narrow, wide, the default.
SIZES = [(2, 1), (3, 4), (5, 2), (10, 5)]
FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def make(num_envs=1, seed=0, **config):
    return vecenv.make(GAME, num_envs=num_envs, seed=seed, **config)


def one_hot(wind):
    return np.eye(3, dtype=np.uint8)[wind]


def put(engine, i=0, paddle_x=None, balls=None, wind=None, time=None):
    """Set episode i's paddle column, {row: column} balls, wind and time since the wind changed."""
    record = engine.get_state(i)
    if paddle_x is not None:
        record["paddle_x"] = paddle_x
    if balls is not None:
        record["balls"][:] = -1
        for row, column in balls.items():
            record["balls"][row] = column
    if wind is not None:
        record["wind_direction"] = one_hot(wind)
    if time is not None:
        record["time_since_wind_change"] = time
    engine.set_state(record, i)


def balls_of(engine, i=0):
    return {r: int(c) for r, c in enumerate(engine.states["balls"][i]) if c != -1}


def expected_obs(rows, columns, paddle_x, balls, wind):
    board = np.zeros((rows, columns), dtype=np.int64)
    board[rows - 1, paddle_x] = 1
    for row, column in balls.items():
        board[row, column] = 1
    return np.concatenate([board.ravel(), one_hot(wind).astype(np.int64)])


def step(engine, *actions):
    obs, rewards, terminated, truncated = engine.step(np.array(actions, dtype=np.int64))
    assert not terminated.any() and not truncated.any()
    return obs["board"][:, 0], rewards[:, 0]


# -- start -------------------------------------------------------------------------------------


def test_start_state_and_observation():
    e = make(num_envs=6, seed=3)
    s = e.get_state()
    assert (s["paddle_x"] == 2).all() and (s["paddle_y"] == 9).all()
    assert (s["wind_direction"] == one_hot(NONE)).all()
    assert (s["time_since_wind_change"] == 0).all()
    assert (s["balls"][:, 1:] == -1).all() and (
        (s["balls"][:, 0] >= 0) & (s["balls"][:, 0] < 5)
    ).all()
    for i in range(6):
        want = expected_obs(10, 5, 2, {0: int(s["balls"][i, 0])}, NONE)
        np.testing.assert_array_equal(e.obs["board"][i, 0], want)


def test_start_paddle_is_centred_for_other_sizes():
    e = make(num_envs=2, rows=4, columns=8)
    assert e.obs["board"].shape == (2, 1, 4 * 8 + 3)
    assert (e.states["paddle_x"] == 4).all() and (e.states["paddle_y"] == 3).all()
    assert e.states["balls"].shape == (2, 4)


def test_first_ball_column_is_uniform():
    e = make(num_envs=5000, seed=11)
    counts = np.bincount(e.states["balls"][:, 0], minlength=5)
    assert counts.size == 5
    # 1000 expected per column, standard deviation about 28.
    assert (np.abs(counts - 1000) < 150).all(), counts


# -- paddle ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start, action, end",
    [(2, 0, 1), (2, 1, 2), (2, 2, 3), (0, 0, 0), (0, 2, 1), (4, 2, 4), (4, 0, 3)],
)
def test_paddle_moves_and_is_clipped(start, action, end):
    e = make(spawn_probability=0.0)
    put(e, paddle_x=start, balls={})
    step(e, action)
    assert e.states["paddle_x"][0] == end


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
    np.testing.assert_array_equal(obs[0], expected_obs(10, 5, 2, {4: moved}, wind))


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


# -- spawning ----------------------------------------------------------------------------------


def test_spawn_probability_one_adds_a_ball_every_step_and_zero_never():
    e = vecenv.make(GAME, num_envs=2, seed=0, spawn_probability=1.0)
    for _ in range(20):
        step(e, STAY, STAY)
        assert (e.states["balls"][:, 0] != -1).all()
        assert (e.states["balls"][:, :9] != -1).all() or e.states["step"][0] < 9
    z = make(num_envs=3, spawn_probability=0.0)
    for _ in range(12):
        step(z, STAY, STAY, STAY)
    assert (z.states["balls"] == -1).all()


def test_spawns_follow_the_probability_and_uniform_columns():
    n, p = 4000, 0.3
    e = make(num_envs=n, seed=5, spawn_probability=p)
    counts = np.zeros(5, dtype=np.int64)
    spawned = 0
    for _ in range(5):
        step(e, *([STAY] * n))
        top = e.states["balls"][:, 0]
        spawned += (top != -1).sum()
        counts += np.bincount(top[top != -1], minlength=5)
    trials = 5 * n
    # Mean 6000, standard deviation about 65.
    assert abs(spawned - p * trials) < 400, spawned
    assert (np.abs(counts - spawned / 5) < 250).all(), counts


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


def test_default_schedule_keeps_the_start_wind():
    e = make(num_envs=4, seed=2)
    for _ in range(300):
        step(e, 0, 1, 2, 1)
    assert (e.states["wind_direction"] == one_hot(NONE)).all()
    assert (e.states["time_since_wind_change"] == 300).all()


# -- state checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("paddle_x", -1, "paddle should be positioned at the bottom"),
        ("paddle_x", 5, "paddle should be positioned at the bottom"),
        ("paddle_y", 8, "paddle should be positioned at the bottom"),
        ("balls", (3, 5), "row range \\[0, 10\\) and column range \\[0, 5\\)"),
        ("balls", (3, -2), "column range"),
        ("balls", (9, 2), "paddle's row"),
        ("wind_direction", (0, 0, 0), "exactly one entry of wind_direction"),
        ("wind_direction", (1, 0, 1), "exactly one entry of wind_direction"),
        ("wind_direction", (2, 0, 0), "wind_direction"),
        ("time_since_wind_change", -1, "time_since_wind_change"),
    ],
)
def test_invalid_states_are_refused_and_change_nothing(field, value, message):
    e = make(num_envs=3, seed=4)
    step(e, 0, 1, 2)
    before = e.get_state()
    obs = e.obs["board"].copy()
    bad = e.get_state()
    if field == "balls":
        bad["balls"][1, value[0]] = value[1]
    elif field == "wind_direction":
        bad["wind_direction"][1] = value
    else:
        bad[field][1] = value
    with pytest.raises(ValueError, match=message):
        e.set_state(bad)
    np.testing.assert_array_equal(e.get_state(), before)
    np.testing.assert_array_equal(e.obs["board"], obs)


# -- properties --------------------------------------------------------------------------------


def check_invariants(engine):
    rows, columns = engine.config["rows"], engine.config["columns"]
    s = engine.states
    assert ((s["paddle_x"] >= 0) & (s["paddle_x"] < columns)).all()
    assert (s["paddle_y"] == rows - 1).all()
    assert ((s["balls"] >= -1) & (s["balls"] < columns)).all()
    assert (s["balls"][:, rows - 1] == -1).all()
    assert (s["wind_direction"].sum(axis=1) == 1).all()
    assert (s["time_since_wind_change"] < engine.config["change_every"]).all()
    for i in range(engine.num_envs):
        balls = {r: int(c) for r, c in enumerate(s["balls"][i]) if c != -1}
        want = expected_obs(
            rows, columns, int(s["paddle_x"][i]), balls, int(s["wind_direction"][i].argmax())
        )
        np.testing.assert_array_equal(engine.obs["board"][i, 0], want)


@FUZZ
@given(
    size=st.sampled_from(SIZES),
    p=st.sampled_from([0.0, 0.3, 1.0]),
    change_every=st.integers(1, 4),
    seed=st.integers(0, 2**32),
    actions=st.lists(st.integers(0, 2), min_size=1, max_size=40),
)
def test_random_action_sequences_keep_the_state_valid(size, p, change_every, seed, actions):
    rows, columns = size
    e = make(
        num_envs=2,
        seed=seed,
        rows=rows,
        columns=columns,
        spawn_probability=p,
        change_every=change_every,
    )
    for a in actions:
        obs, rewards = step(e, a, 2 - a)
        assert np.isin(rewards, (-1.0, 0.0, 1.0)).all()
        check_invariants(e)


@FUZZ
@given(data=st.data())
def test_random_valid_states_run(data):
    e = make(num_envs=2, seed=9, change_every=3)
    state = e.get_state()
    for i in range(2):
        state["paddle_x"][i] = data.draw(st.integers(0, 4))
        state["balls"][i] = data.draw(st.lists(st.integers(-1, 4), min_size=9, max_size=9)) + [-1]
        state["wind_direction"][i] = one_hot(data.draw(st.integers(0, 2)))
        state["time_since_wind_change"][i] = data.draw(st.integers(0, 2**40))
    e.set_state(state)
    for i in range(2):
        balls = {r: int(c) for r, c in enumerate(state["balls"][i]) if c != -1}
        want = expected_obs(
            10, 5, int(state["paddle_x"][i]), balls, int(state["wind_direction"][i].argmax())
        )
        np.testing.assert_array_equal(e.obs["board"][i, 0], want)
    for a in data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=10)):
        step(e, a, a)
    s = e.states
    assert (s["balls"][:, 9] == -1).all() and (s["wind_direction"].sum(axis=1) == 1).all()


@FUZZ
@given(
    field=st.sampled_from(["paddle_x", "paddle_y", "balls", "wind_direction", "time"]),
    value=st.integers(-(2**63), 2**63 - 1),
    index=st.integers(0, 9),
)
def test_random_invalid_states_raise_and_change_nothing(field, value, index):
    e = make(num_envs=2, seed=1)
    before = e.get_state()
    bad = e.get_state()
    if field == "paddle_x":
        if 0 <= value < 5:
            value = 5 + value
        bad["paddle_x"][0] = value
    elif field == "paddle_y":
        bad["paddle_y"][0] = value if value != 9 else 10
    elif field == "balls":
        bad["balls"][0, index] = value if not -1 <= value < 5 or index == 9 else 5
        if index == 9 and value == -1:
            bad["balls"][0, 9] = 0
    elif field == "wind_direction":
        bad["wind_direction"][0] = (value % 256, 1, 1)
    else:
        bad["time_since_wind_change"][0] = min(value, -1)
    with pytest.raises(ValueError):
        e.set_state(bad)
    np.testing.assert_array_equal(e.get_state(), before)


# -- frames and faces --------------------------------------------------------------------------


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


def test_gymnasium_vector_env_runs_and_never_ends():
    env = gymnasium.make_vec("vecenv/WindyCatch-v0", num_envs=8)
    assert env.single_observation_space == gymnasium.spaces.Box(0, 1, (53,), np.int64)
    assert env.single_action_space == gymnasium.spaces.Discrete(3)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8, 53) and obs.dtype == np.int64
    env.action_space.seed(0)
    total = np.zeros(8)
    for _ in range(300):
        obs, rewards, terminated, truncated, _ = env.step(env.action_space.sample())
        assert not terminated.any() and not truncated.any()
        assert env.single_observation_space.contains(obs[0])
        total += rewards
    assert (total != 0).any()
    env.close()
    single = gymnasium.make("vecenv/WindyCatch-v0")
    single.reset(seed=1)
    for _ in range(20):
        _, _, terminated, truncated, _ = single.step(1)
        assert not terminated and not truncated
