"""csuite's Catch: rules checked against hand-derived values and csuite's own catch_test.py,
spawn statistics, random input, and the batched faces (continuing: never terminated)."""

import warnings

import gymnasium
import numpy as np
import pytest
from dm_env import specs
from gymnasium.utils.env_checker import check_env
from hypothesis import given
from hypothesis import strategies as st

import vecenv
from vecenv import csuite
from vecenv.envs.catch import render as catch_render

from .helpers import FUZZ, board, chi_square

LEFT, STAY, RIGHT = 0, 1, 2
ROWS, COLUMNS = 10, 5


def set_board(env, paddle_x, balls):
    """Put the paddle in column ``paddle_x`` and balls at ``{row: column}``; keep the stream."""
    state = env.get_state()
    state.paddle_x = paddle_x
    state.balls[:] = -1
    for row, column in balls.items():
        state.balls[row] = column
    env.set_state(state)


def started(settings=None, seed=0):
    env = csuite.load("catch", settings)
    env.start(seed=seed)
    return env


# -- specs and the start state ---------------------------------------------------------------


def test_specs_and_config():
    env = csuite.load("catch")
    assert env.observation_spec() == specs.BoundedArray((10, 5), int, 0, 1, name="board")
    assert env.action_spec() == specs.DiscreteArray(3, dtype=int, name="action")
    config = env.get_config()
    assert (config.rows, config.columns, config.spawn_probability) == (10, 5, 0.1)
    other = csuite.load("catch", {"rows": 4, "columns": 7, "spawn_probability": 0.5})
    assert other.observation_spec() == specs.BoundedArray((4, 7), int, 0, 1, name="board")
    assert other.get_config().rows == 4


@pytest.mark.parametrize("rows,columns", [(10, 5), (4, 7), (2, 1), (3, 2)])
def test_start_state(rows, columns):
    """Paddle centred (columns // 2) on the bottom row, one ball in the top row."""
    env = csuite.load("catch", {"rows": rows, "columns": columns})
    for seed in range(5):
        obs = env.start(seed=seed)
        state = env.get_state()
        assert state.paddle_y == rows - 1 and state.paddle_x == columns // 2
        column = int(state.balls[0])
        assert 0 <= column < columns
        assert (state.balls[1:] == -1).all()
        np.testing.assert_array_equal(obs, board(rows, columns, columns // 2, {0: column}))


# -- csuite's catch_test.py ------------------------------------------------------------------


@pytest.mark.parametrize("paddle_x,left,right", [(0, 0, 1), (2, 1, 3), (4, 3, 4)])
def test_one_step_moves_the_paddle_and_clips_at_the_walls(paddle_x, left, right):
    env = started()
    for action, expected in [(LEFT, left), (RIGHT, right), (STAY, paddle_x)]:
        set_board(env, paddle_x, {0: 1})
        env.step(action)
        assert env.get_state().paddle_x == expected


def test_paddle_stays_at_the_walls():
    env = started({"spawn_probability": 0.0})
    xs = [int(env.get_state().paddle_x)]
    for action in [LEFT] * 4 + [RIGHT] * 7 + [LEFT]:
        env.step(action)
        xs.append(int(env.get_state().paddle_x))
    assert xs == [2, 1, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4, 3]


@pytest.mark.parametrize(
    "paddle_x,action,ball_x,reward",
    [
        (0, STAY, 2, -1.0),  # beside the paddle
        (2, STAY, 2, 1.0),  # on it
        (1, RIGHT, 2, 1.0),  # the paddle moves first, then the ball lands
        (2, RIGHT, 2, -1.0),
        (0, LEFT, 0, 1.0),  # clipped at the wall, still under the ball
        (4, RIGHT, 3, -1.0),
    ],
)
def test_ball_landing_scores(paddle_x, action, ball_x, reward):
    env = started()
    set_board(env, paddle_x, {ROWS - 2: ball_x})
    obs, r = env.step(action)
    assert r == reward and type(r) is float
    state = env.get_state()
    assert (state.balls[1:] == -1).all()  # the landed ball is gone
    assert obs[ROWS - 1].sum() == 1  # only the paddle on the bottom row


def test_catching_one_ball_from_start():
    env = started()
    set_board(env, 2, {0: 2})
    for _ in range(4):
        assert env.step(RIGHT)[1] == 0
        assert env.step(LEFT)[1] == 0
    assert env.step(STAY)[1] == 1


def test_catching_two_balls_from_start():
    env = started()
    set_board(env, 2, {1: 0, 0: 2})
    for _ in range(7):
        assert env.step(LEFT)[1] == 0
    assert env.step(LEFT)[1] == 1
    assert env.step(RIGHT)[1] == -1


def test_exact_boards_without_spawns():
    """Hand-derived boards: one ball falls from (0, 4) while the paddle goes right from 2."""
    env = started({"spawn_probability": 0.0})
    set_board(env, 2, {0: 4})
    paddle = 2
    for k in range(1, ROWS - 1):
        paddle = min(paddle + 1, COLUMNS - 1)
        obs, reward = env.step(RIGHT)
        assert reward == 0.0
        np.testing.assert_array_equal(obs, board(ROWS, COLUMNS, paddle, {k: 4}))
    obs, reward = env.step(STAY)
    assert reward == 1.0
    np.testing.assert_array_equal(obs, board(ROWS, COLUMNS, 4, {}))
    for _ in range(30):  # nothing ever spawns again
        obs, reward = env.step(LEFT)
        assert reward == 0.0 and obs.sum() == 1


def test_always_spawning_on_one_column_catches_every_ball():
    """With spawn_probability 1 every step adds a ball: the board fills after rows - 2 steps and
    from step rows - 1 on every step lands a ball, always on the paddle when there is one column."""
    env = started({"spawn_probability": 1.0, "columns": 1})
    rewards = [env.step(STAY)[1] for _ in range(40)]
    assert rewards == [0.0] * (ROWS - 2) + [1.0] * (40 - ROWS + 2)
    obs, _ = env.step(STAY)
    assert (obs == 1).all()


def test_smallest_board_lands_a_ball_every_spawn():
    """rows 2: a ball spawned at a step lands at the next one."""
    env = started({"rows": 2, "columns": 3, "spawn_probability": 1.0})
    for _ in range(50):
        state = env.get_state()
        column, paddle = int(state.balls[0]), int(state.paddle_x)
        _, reward = env.step(STAY)
        assert reward == (1.0 if column == paddle else -1.0)


def expected_step(state, action, columns):
    """csuite's deterministic part of a step: paddle, falling balls and reward."""
    paddle = min(max(int(state.paddle_x) + action - 1, 0), columns - 1)
    balls = [int(b) for b in state.balls]
    landing = balls[-2]
    reward = 0.0 if landing == -1 else (1.0 if landing == paddle else -1.0)
    return paddle, [-1] + balls[:-2] + [-1], reward


@pytest.mark.parametrize("rows,columns,p", [(10, 5, 0.1), (4, 3, 0.6), (6, 1, 0.3)])
def test_random_play_follows_the_rules_exactly(rows, columns, p):
    """Every step of long random play against the deterministic rules; the spawn (row 0) is
    either nothing or a ball in range, and the observation is the state's board."""
    env = started({"rows": rows, "columns": columns, "spawn_probability": p}, seed=11)
    rng = np.random.default_rng(5)
    for action in rng.integers(0, 3, size=2000).tolist():
        before = env.get_state()
        paddle, balls, reward = expected_step(before, action, columns)
        obs, r = env.step(action)
        after = env.get_state()
        assert r == reward
        assert after.paddle_x == paddle and after.paddle_y == rows - 1
        assert list(after.balls[1:]) == balls[1:]
        assert -1 <= after.balls[0] < columns
        config = {"rows": rows, "columns": columns}
        np.testing.assert_array_equal(obs, catch_render.board(after, config))


# -- randomness --------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.1, 0.35])
def test_spawn_rate_and_columns(p):
    """Over 400 episodes x 250 steps (1e5 draws) the spawn rate is p within 4.5 standard errors,
    which a rate off by 10% would fail; columns are uniform by a chi-square test (4 degrees of
    freedom; 25 is exceeded with probability 5e-5)."""
    n, steps = 400, 250
    engine = vecenv.make("catch", num_envs=n, seed=123, spawn_probability=p)
    first = engine.states["balls"][:, 0].copy()
    spawned, columns = 0, np.zeros(COLUMNS, dtype=np.int64)
    actions = np.ones(n, dtype=np.int64)
    for _ in range(steps):
        engine.step(actions)
        top = engine.states["balls"][:, 0]
        new = top[top >= 0]
        spawned += new.size
        columns += np.bincount(new, minlength=COLUMNS)
    draws = n * steps
    rate = spawned / draws
    assert abs(rate - p) < 4.5 * np.sqrt(p * (1 - p) / draws)
    assert abs(rate - p) < 0.1 * p
    assert chi_square(columns) < 25
    assert chi_square(np.bincount(first, minlength=COLUMNS)) < 25


def test_first_ball_column_is_uniform_over_seeds_of_the_face():
    env = csuite.load("catch", {"columns": 4})
    counts = np.zeros(4, dtype=np.int64)
    for seed in range(2000):
        env.start(seed=seed)
        counts[int(env.get_state().balls[0])] += 1
    assert chi_square(counts) < 22  # 3 degrees of freedom


def test_spawn_probability_extremes():
    never = started({"spawn_probability": 0.0})
    for _ in range(200):
        never.step(STAY)
        assert never.get_state().balls[0] == -1
    always = started({"spawn_probability": 1.0})
    for _ in range(200):
        always.step(STAY)
        assert always.get_state().balls[0] >= 0


# -- frames ------------------------------------------------------------------------------------


def test_render_is_csuites_binary_board():
    env = started({"rows": 6, "columns": 4})
    env.step(LEFT)
    obs, _ = env.step(LEFT)
    frame = env.render()
    assert frame.shape == (6, 4, 3) and frame.dtype == np.uint8
    for channel in range(3):
        np.testing.assert_array_equal(frame[:, :, channel], obs.astype(np.uint8) * 255)
    engine = vecenv.make("catch", num_envs=1, rows=6, columns=4)
    text = engine.render(0, "ansi")
    lines = text.split("\n")
    assert len(lines) == 6 and lines[-1] == "..=." and lines[0].count("o") == 1


# -- random input ------------------------------------------------------------------------------

configs = st.fixed_dictionaries(
    {
        "rows": st.sampled_from([2, 3, 10]),
        "columns": st.integers(1, 9),
        "spawn_probability": st.floats(0.0, 1.0),
    }
)


@FUZZ
@given(config=configs, seed=st.integers(0, 2**64 - 1), actions=st.lists(st.integers(0, 2)))
def test_random_action_sequences_never_crash(config, seed, actions):
    env = csuite.load("catch", config)
    spec = env.observation_spec()
    obs = env.start(seed=seed)
    for action in actions:
        spec.validate(obs)
        obs, reward = env.step(action)
        assert reward in (-1.0, 0.0, 1.0)
        assert obs[-1].sum() == 1  # the paddle, alone on the bottom row
        assert (obs[:-1].sum(axis=1) <= 1).all()  # at most one ball per row


@st.composite
def valid_states(draw):
    rows = draw(st.sampled_from([2, 3, 10]))
    columns = draw(st.integers(1, 9))
    balls = draw(st.lists(st.integers(-1, columns - 1), min_size=rows - 1, max_size=rows - 1))
    return (
        {"rows": rows, "columns": columns},
        draw(st.integers(0, columns - 1)),
        balls + [-1],
        draw(st.integers(0, 2**64 - 1)),
        draw(st.integers(0, 2**62)),
    )


@FUZZ
@given(case=valid_states(), actions=st.lists(st.integers(0, 2), max_size=20))
def test_random_valid_states_are_accepted_and_run(case, actions):
    config, paddle_x, balls, word, step = case
    env = csuite.load("catch", config)
    env.start(seed=0)
    state = env.get_state()
    state.paddle_x, state.rng, state.step = paddle_x, word, step
    state.balls[:] = balls
    env.set_state(state)
    expected = board(
        config["rows"], config["columns"], paddle_x, {r: c for r, c in enumerate(balls) if c >= 0}
    )
    np.testing.assert_array_equal(env.render()[:, :, 0], expected * 255)
    for action in actions:
        before = env.get_state()
        _, _, reward = expected_step(before, action, config["columns"])
        obs, r = env.step(action)
        env.observation_spec().validate(obs)
        assert r == reward


@FUZZ
@given(
    case=valid_states(),
    field=st.sampled_from(["paddle_x", "paddle_y", "ball", "bottom_ball"]),
    value=st.integers(-(2**63), 2**63 - 1),
)
def test_random_invalid_states_raise_value_error(case, field, value):
    config, paddle_x, balls, word, step = case
    rows, columns = config["rows"], config["columns"]
    env = csuite.load("catch", config)
    env.start(seed=1)
    before = env.get_state()
    state = env.get_state()
    state.balls[:] = balls
    if field == "paddle_x":
        if 0 <= value < columns:
            value = columns + abs(value) % 5
        state.paddle_x = value
    elif field == "paddle_y":
        if value == rows - 1:
            value = rows
        state.paddle_y = value
    elif field == "ball":
        if -1 <= value < columns:
            value = -2 - abs(value) % 3
        state.balls[value % (rows - 1)] = value
    else:
        state.balls[rows - 1] = abs(value) % columns
    with pytest.raises(ValueError, match="Invalid state"):
        env.set_state(state)
    np.testing.assert_array_equal(env.get_state(), before)


# -- batched faces -----------------------------------------------------------------------------


def test_engine_batch_never_terminates_and_truncates_only_with_a_limit():
    engine = vecenv.make("catch", num_envs=16, seed=0)
    assert engine.max_episode_steps is None
    rng = np.random.default_rng(0)
    total = np.zeros(16)
    for _ in range(500):
        _, rewards, terminated, truncated = engine.step(rng.integers(0, 3, size=16))
        assert not terminated.any() and not truncated.any()
        total += rewards[:, 0]
    assert (engine.states["step"] == 500).all()
    assert (total != 0).any()
    limited = vecenv.make("catch", num_envs=4, seed=0, max_episode_steps=6)
    flags = [limited.step(np.ones(4, dtype=np.int64))[3].copy() for _ in range(7)]
    assert [f.all() for f in flags] == [False] * 5 + [True] + [False]
    assert not any(f.any() for f in flags[:5])


def test_face_start_is_episode_zero_of_the_batch():
    env = started(seed=42)
    engine = vecenv.make("catch", num_envs=3, seed=42)
    rng = np.random.default_rng(3)
    for _ in range(100):
        actions = rng.integers(0, 3, size=3)
        obs, rewards, _, _ = engine.step(actions)
        mine, reward = env.step(int(actions[0]))
        np.testing.assert_array_equal(mine, obs["board"][0, 0])
        assert reward == rewards[0, 0]


def test_gymnasium_env_is_continuing():
    env = gymnasium.make("vecenv/Catch-v0")
    assert env.spec.max_episode_steps is None
    assert env.observation_space == gymnasium.spaces.Box(0, 1, (10, 5), np.int64)
    assert env.action_space == gymnasium.spaces.Discrete(3)
    obs, _ = env.reset(seed=0)
    for _ in range(300):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert obs in env.observation_space
        assert reward in (-1.0, 0.0, 1.0)
        assert terminated is False and truncated is False
    small = gymnasium.make("vecenv/Catch-v0", rows=4, columns=3)
    assert small.observation_space.shape == (4, 3)


def test_gymnasium_env_truncates_with_max_episode_steps():
    env = gymnasium.make("vecenv/Catch-v0", max_episode_steps=5)
    env.reset(seed=0)
    flags = [env.step(STAY)[2:4] for _ in range(5)]
    assert flags == [(False, False)] * 4 + [(False, True)]


def test_gymnasium_checker_is_silent():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make("vecenv/Catch-v0", render_mode="rgb_array")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_gymnasium_vector_env():
    envs = gymnasium.make_vec("vecenv/Catch-v0", num_envs=4)
    obs, _ = envs.reset(seed=1)
    assert obs.shape == (4, 10, 5) and obs.dtype == np.int64
    for _ in range(200):
        _, rewards, terminated, truncated, _ = envs.step(envs.action_space.sample())
        assert not terminated.any() and not truncated.any()
        assert np.isin(rewards, (-1.0, 0.0, 1.0)).all()
    limited = gymnasium.make_vec("vecenv/Catch-v0", num_envs=2, max_episode_steps=3)
    limited.reset(seed=0)
    truncs = [limited.step(np.ones(2, dtype=np.int64))[3].tolist() for _ in range(4)]
    assert truncs == [[False, False], [False, False], [True, True], [False, False]]


def test_threads_and_batch_size_do_not_change_episodes():
    """The engine's determinism on catch (its generic test sets episodeSteps, which csuite games
    do not have): the parallel loop (N >= 1024) and a small batch give the same episodes."""

    def rollout(num_envs, num_threads):
        engine = vecenv.make(
            "catch", num_envs=num_envs, seed=5, num_threads=num_threads, max_episode_steps=50
        )
        rng = np.random.default_rng(1)
        trace = []
        for _ in range(60):
            actions = rng.integers(0, 3, size=2048)[:num_envs]
            obs, rewards, _, truncated = engine.step(actions)
            trace.append(
                (obs["board"].copy(), rewards.copy(), truncated.copy(), engine.get_state())
            )
        return trace

    big = rollout(1027, 1)
    for other in (rollout(1027, 2), rollout(7, 1)):
        for a, b in zip(big, other, strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x[: len(y)], y)
