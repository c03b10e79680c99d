"""Helpers shared by the csuite games' tests: engines, states, refused states, random-input
settings, statistics, the gym faces, and the expected values of the Catch games and the pendulums
written out by hand."""

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import vecenv
from vecenv.kernels.rng import GOLDEN

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


# -- engines -----------------------------------------------------------------------------------


def step(engine, *actions):
    """One step of every episode (one action each); they never end. Returns the observations (the
    game's one observation field) and the rewards, one row per episode."""
    obs, rewards, terminated, truncated = engine.step(np.array(actions, dtype=np.int64))
    assert not terminated.any() and not truncated.any()
    ((_, values),) = obs.items()
    return values[:, 0], rewards[:, 0]


def put(engine, i=0, balls=None, **fields):
    """Set fields of episode ``i``'s record, those given as None left as they are; ``balls``
    (Catch's games) as {row: column}."""
    record = engine.get_state(i)
    if balls is not None:
        record["balls"][:] = -1
        for row, column in balls.items():
            record["balls"][row] = column
    for name, value in fields.items():
        if value is not None:
            record[name] = value
    engine.set_state(record, i)


def assert_refused(engine, bad, match=None):
    """``set_state(bad)`` raises ValueError (its message matching ``match``) and changes neither
    the state nor the observations."""
    before = engine.get_state()
    obs = {name: values.copy() for name, values in engine.obs.items()}
    with pytest.raises(ValueError, match=match):
        engine.set_state(bad)
    np.testing.assert_array_equal(engine.get_state(), before)
    for name, values in obs.items():
        np.testing.assert_array_equal(engine.obs[name], values)


def advanced(words, draws):
    """The stream words after ``draws`` draws each (every draw adds GOLDEN, modulo 2**64)."""
    draws = np.broadcast_to(draws, np.shape(words))
    return np.array(
        [(int(w) + int(k) * int(GOLDEN)) % 2**64 for w, k in zip(words, draws, strict=True)],
        dtype=np.uint64,
    )


def chi_square(counts):
    """Pearson's statistic of ``counts`` against equal expected counts."""
    counts = np.asarray(counts, dtype=np.float64)
    expected = counts.sum() / counts.size
    return float(((counts - expected) ** 2 / expected).sum())


def run_vector_env(env_id, observation_space, action_space, policy=None, steps=300, **kwargs):
    """``steps`` steps of 8 episodes of ``env_id`` through gymnasium's vector face, from seed 0:
    the spaces are ``observation_space`` and ``action_space``, every observation lies in its space
    and no episode ever ends. ``policy(obs, t)`` gives the actions, or None for random ones.
    Returns the observations after the reset and the rewards, one row per step."""
    envs = gymnasium.make_vec(env_id, num_envs=8, **kwargs)
    assert envs.single_observation_space == observation_space
    assert envs.single_action_space == action_space
    obs, _ = envs.reset(seed=0)
    first = obs.copy()
    assert obs.shape == (8, *observation_space.shape) and obs.dtype == observation_space.dtype
    envs.action_space.seed(0)
    rewards = []
    for t in range(steps):
        actions = None if policy is None else policy(obs, t)
        obs, reward, terminated, truncated, _ = envs.step(
            envs.action_space.sample() if actions is None else actions
        )
        assert not terminated.any() and not truncated.any()
        assert all(observation_space.contains(np.asarray(o)) for o in obs)
        rewards.append(reward)
    envs.close()
    return first, np.array(rewards)


def run_single_env(env_id, steps):
    """``steps`` random steps of gymnasium's single face of ``env_id``: it has no time limit and
    never ends."""
    env = gymnasium.make(env_id)
    assert env.spec.max_episode_steps is None
    env.reset(seed=0)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        assert terminated is False and truncated is False


# -- the Catch games ---------------------------------------------------------------------------

STAY = 1  # the paddle's actions: 0 left, 1 stay, 2 right
# A few board sizes (each compiles its own kernels): the smallest, narrow, wide, the default.
SIZES = [(2, 1), (3, 4), (5, 2), (10, 5)]


def board(rows, columns, paddle_x, balls):
    """Catch's (rows, columns) board: 1 at the paddle (on the bottom row) and at the balls, given
    as {row: column}."""
    cells = np.zeros((rows, columns), dtype=np.int64)
    cells[rows - 1, paddle_x] = 1
    for row, column in balls.items():
        cells[row, column] = 1
    return cells


def balls_in(balls):
    """{row: column} of a record's ``balls`` (-1 where a row has none)."""
    return {r: int(c) for r, c in enumerate(balls) if c != -1}


def balls_of(engine, i=0):
    return balls_in(engine.states["balls"][i])


def one_hot(wind):
    """WindyCatch's wind bits of wind 0 (none), 1 (left) or 2 (right)."""
    return np.eye(3, dtype=np.uint8)[wind]


def windy_observation(rows, columns, paddle_x, balls, wind):
    """WindyCatch's observation: the board row by row, then the wind's bits."""
    cells = board(rows, columns, paddle_x, balls).ravel()
    return np.concatenate([cells, one_hot(wind).astype(np.int64)])


def dancing_observation(rows, columns, paddle_x, balls, shuffle):
    """DancingCatch's observation: the board row by row, read through ``shuffle``."""
    return board(rows, columns, paddle_x, balls).ravel()[shuffle]


# -- the pendulums -----------------------------------------------------------------------------

NEGATIVE, POSITIVE = 0, 2  # and STAY: torques -1, +1 and 0
PENDULUM_DEFAULTS = {
    "friction": 0.1,
    "gravity": 9.81,
    "simulation_step_size": 0.05,
    "act_step_period": 4,
    "max_speed": np.inf,
}
POKE_DEFAULTS = {"perturb_prob": 0.01, "perturb_torque": 10.0}  # pendulum_poke's own
# csuite's pendulum parameters as random input (each one given or left at its default).
PENDULUM_PARAMS = {
    "friction": st.floats(0.0, 2.0),
    "gravity": st.floats(-20.0, 20.0),
    "simulation_step_size": st.floats(0.0, 0.5),
    "act_step_period": st.integers(0, 8),
    "max_speed": st.one_of(st.just(np.inf), st.floats(0.0, 50.0)),
}
# The pendulums' observation: cos and sin of the angle, the velocity (unbounded by default).
OBSERVATION_SPACE = gymnasium.spaces.Box(
    np.array([-1, -1, -np.inf], dtype=np.float32),
    np.array([1, 1, np.inf], dtype=np.float32),
    (3,),
    np.float32,
)
# The reward region, as csuite computes it: (pi - 30 deg, pi + 30 deg), open.
REWARD_LOW = np.pi - 30 * (np.pi / 180)
REWARD_HIGH = np.pi + 30 * (np.pi / 180)


def reference_step(angle, velocity, torque, params=None):
    """One action of csuite's pendulum, written from its equations with numpy scalars:
    ``torque`` is the applied torque (an int, or a float when poked). Returns the new angle,
    velocity, float32 observation and sparse reward."""
    p = dict(PENDULUM_DEFAULTS, **(params or {}))
    new_angle, new_velocity = angle, velocity
    for _ in range(p["act_step_period"]):
        new_velocity += (
            torque - p["friction"] * new_velocity - p["gravity"] * np.sin(new_angle)
        ) * p["simulation_step_size"]
        new_angle += new_velocity * p["simulation_step_size"]
    new_angle = new_angle % (2 * np.pi)
    new_velocity = np.clip(new_velocity, -p["max_speed"], p["max_speed"])
    with np.errstate(over="ignore"):  # a huge velocity is infinite in float32
        obs = np.array((np.cos(new_angle), np.sin(new_angle), new_velocity), dtype=np.float32)
    reward = 1.0 if REWARD_LOW < new_angle < REWARD_HIGH else 0.0
    return new_angle, new_velocity, obs, reward


def make_pendulum(num_envs=1, params=None, game="csuite_pendulum", **kwargs):
    """An engine of ``game`` with csuite's parameters ``params`` (our configuration has the same
    keys and values)."""
    return vecenv.make(game, num_envs=num_envs, **dict(params or {}, **kwargs))


def put_pendulums(engine, angles, velocities, idx=None):
    where = np.arange(engine.num_envs) if idx is None else np.atleast_1d(idx)
    state = engine.get_state(where)
    state["angle"] = angles
    state["velocity"] = velocities
    engine.set_state(state, where)


def same_bits(a, b):
    return np.array(a, dtype=np.float64).tobytes() == np.array(b, dtype=np.float64).tobytes()


def assert_matches(engine, i, angle, velocity, obs, reward):
    """Episode ``i`` of a pendulum engine is at ``angle`` and ``velocity`` to the bit, shows
    ``obs`` and was paid ``reward``, and goes on."""
    s = engine.get_state(i)
    assert same_bits(s["angle"], angle), (s["angle"], angle)
    assert same_bits(s["velocity"], velocity), (s["velocity"], velocity)
    ours = engine.obs["observation"][i, 0]
    assert ours.dtype == np.float32
    assert ours.tobytes() == obs.tobytes(), (ours, obs)
    assert engine.rewards[i, 0] == reward
    assert not engine.terminated[i] and not engine.truncated[i]


def pumping_actions(angle, velocity):
    """Push with the swing (a fixed rule of the state, so the action sequence is fixed)."""
    return POSITIVE if velocity >= 0 else NEGATIVE
