"""Pendulum against gymnasium's Pendulum-v1: dynamics, rewards, limits, spaces, frames."""

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control.pendulum import PendulumEnv

import vecenv
from vecenv import registry

NAME = "pendulum"
GYM_ID = "Pendulum-v1"
F32 = np.float32


def gym_state(env):
    return np.asarray(env.unwrapped.state, dtype=np.float64)


def our_state(engine, i=0):
    s = engine.get_state(i)
    return np.array([s["theta"], s["theta_dot"]])


def assert_same_step(engine, i, obs, reward, terminated, truncated, env):
    np.testing.assert_allclose(our_state(engine, i), gym_state(env), rtol=1e-12, atol=1e-12)
    ours = engine.obs["obs"][i, 0]
    assert ours.dtype == obs.dtype == np.float32
    np.testing.assert_array_max_ulp(ours, obs, maxulp=1)
    np.testing.assert_allclose(engine.rewards[i, 0], reward, rtol=1e-12, atol=0)
    assert bool(engine.terminated[i]) == terminated
    assert bool(engine.truncated[i]) == truncated
    assert engine.get_state(i)["last_u"] == env.unwrapped.last_u


def random_action(rng):
    """A float32 torque: mostly in range, sometimes on or beyond the bounds."""
    kind = rng.integers(5)
    if kind == 0:
        return F32(rng.choice([3.5, -3.5, 2.0, -2.0, 0.0, 1e6]))
    return F32(rng.uniform(-2.5, 2.5))


def run_side_by_side(engine, env, min_steps, seed):
    """Episodes from our reset states, in both, until ``min_steps`` steps; returns their lengths."""
    rng = np.random.default_rng(seed)
    n = engine.num_envs
    steps, lengths, episode = 0, [], 0
    while steps < min_steps:
        i = episode % n
        mask = np.zeros(n, dtype=np.bool_)
        mask[i] = True
        engine.reset(mask=mask)
        env.reset(seed=int(rng.integers(2**31)))
        env.unwrapped.state = our_state(engine, i)
        while True:
            a = random_action(rng)
            actions = np.zeros((n, 1), dtype=np.float32)
            actions[i, 0] = a
            engine.step(actions)
            obs, reward, terminated, truncated, _ = env.step(np.array([a], dtype=np.float32))
            steps += 1
            assert_same_step(engine, i, obs, reward, terminated, truncated, env)
            if terminated or truncated:
                assert not terminated
                lengths.append(engine.get_state(i)["step"])
                break
        episode += 1
    return lengths


def test_matches_gymnasium_step_by_step():
    engine = vecenv.make(NAME, num_envs=2, seed=31, autoreset="disabled")
    env = gymnasium.make(GYM_ID)
    lengths = run_side_by_side(engine, env, min_steps=1200, seed=0)
    assert lengths == [200] * 6


@pytest.mark.parametrize("g", [9.81, 2.5])
def test_non_default_configuration_matches_gymnasium(g):
    engine = vecenv.make(NAME, num_envs=1, seed=8, autoreset="disabled", g=g, episodeSteps=125)
    env = gymnasium.make(GYM_ID, g=g, max_episode_steps=125)
    lengths = run_side_by_side(engine, env, min_steps=500, seed=1)
    assert lengths == [125] * 4


def one_step_each(starts, actions, g=10.0):
    """Step every (theta, theta_dot) start once in ours and in gymnasium's env."""
    n = len(starts)
    engine = vecenv.make(NAME, num_envs=n, seed=0, autoreset="disabled", g=g)
    state = engine.get_state()
    state["theta"] = [th for th, _ in starts]
    state["theta_dot"] = [thdot for _, thdot in starts]
    engine.set_state(state)
    engine.step(np.asarray(actions, dtype=np.float32).reshape(n, 1))
    env = PendulumEnv(g=g)
    env.reset(seed=0)
    for i, ((th, thdot), a) in enumerate(zip(starts, actions, strict=True)):
        env.state = np.array([th, thdot])
        obs, reward, terminated, truncated, _ = env.step(np.array([a], dtype=np.float32))
        assert_same_step(engine, i, obs, reward, terminated, truncated, env)
    return engine


def test_any_angle_and_speed_match_gymnasium():
    # Angles far outside [-pi, pi) are normalised for the cost, speeds beyond 8 are clipped.
    starts = [
        (th, thdot)
        for th in [-np.pi, np.pi, 7.5, -50.25, 1e6, -3e7, 0.0]
        for thdot in [0.0, -12.0, 40.0, 7.99]
    ]
    one_step_each(starts, [1.5] * len(starts))


def test_torque_cost_matches_numpy_float32_power():
    # gymnasium squares the float32 torque with NumPy's float32 power (the C library's powf),
    # which is not always the correctly rounded product; upright and at rest the cost is that
    # square alone, so any difference shows far above float64 round-off.
    rng = np.random.default_rng(5)
    torques = rng.uniform(-2, 2, 4000).astype(np.float32)
    differs = [float(u) for u in torques if u**2 != F32(float(u) * float(u))]
    chosen = differs[:40] + [float(u) for u in torques[:40]]
    one_step_each([(0.0, 0.0)] * len(chosen), chosen)


def test_reward_and_dynamics_use_the_clipped_torque():
    results = {}
    for a in [2.0, 3.5]:
        engine = vecenv.make(NAME, num_envs=1, seed=9, autoreset="disabled")
        engine.step(np.array([[a]], dtype=np.float32))
        results[a] = (
            our_state(engine),
            float(engine.rewards[0, 0]),
            float(engine.get_state(0)["last_u"]),
        )
    np.testing.assert_array_equal(results[2.0][0], results[3.5][0])
    assert results[2.0][1] == results[3.5][1]
    assert results[3.5][2] == 2.0


def test_float64_actions_act_as_their_float32_rounding():
    runs = []
    for dtype in (np.float64, np.float32):
        engine = vecenv.make(NAME, num_envs=1, seed=2, autoreset="disabled")
        for a in [0.3, -1.7, 0.1, 2.2, -0.9]:
            engine.step(np.array([[a]], dtype=dtype))
        runs.append((engine.get_state(), engine.rewards.copy()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_initial_states_within_gymnasium_ranges_and_varied():
    thetas, speeds = [], []
    for seed in range(20):
        engine = vecenv.make(NAME, num_envs=64, seed=seed)
        for _ in range(3):
            s = engine.get_state()
            assert ((s["theta"] >= -np.pi) & (s["theta"] < np.pi)).all()
            assert ((s["theta_dot"] >= -1.0) & (s["theta_dot"] < 1.0)).all()
            assert (s["last_u"] == 0.0).all()
            thetas.append(s["theta"].copy())
            speeds.append(s["theta_dot"].copy())
            engine.reset()
    thetas, speeds = np.array(thetas), np.array(speeds)
    assert len(np.unique(thetas)) == thetas.size
    assert len(np.unique(speeds)) == speeds.size
    assert thetas.min() < -3.1 and thetas.max() > 3.1
    assert speeds.min() < -0.99 and speeds.max() > 0.99


def test_spaces_and_registration_match_gymnasium():
    spec = registry.get_spec(NAME)
    env = gymnasium.make(GYM_ID)
    (field,) = spec.observation
    ours = spaces.Box(low=field.low, high=field.high, shape=field.shape, dtype=field.dtype)
    assert ours == env.observation_space
    np.testing.assert_array_equal(field.low, env.observation_space.low)
    np.testing.assert_array_equal(field.high, env.observation_space.high)
    action = spec.action
    assert not action.discrete
    low = action.low.reshape(action.shape).astype(action.dtype)
    high = action.high.reshape(action.shape).astype(action.dtype)
    box = spaces.Box(low=low, high=high, shape=action.shape, dtype=action.dtype)
    assert box == env.action_space
    np.testing.assert_array_equal(box.low, env.action_space.low)
    np.testing.assert_array_equal(box.high, env.action_space.high)
    gym_spec = gymnasium.spec(GYM_ID)
    assert spec.gym["id"] == GYM_ID
    assert spec.gym["max_episode_steps"] == gym_spec.max_episode_steps
    assert spec.gym.get("reward_threshold") == gym_spec.reward_threshold
    assert spec.configuration["episodeSteps"].default == gym_spec.max_episode_steps
    assert spec.configuration["g"].default == PendulumEnv().g
    assert spec.render["fps"] == env.metadata["render_fps"]


def test_render_frames():
    spec = registry.get_spec(NAME)
    engine = vecenv.make(NAME, num_envs=1, seed=0)
    frame = engine.render()
    assert frame.dtype == np.uint8
    assert frame.shape == (spec.render["height"], spec.render["width"], 3)
    state = engine.get_state(0)
    state["theta"] += 1.0
    engine.set_state(state, 0)
    turned = engine.render()
    assert (turned != frame).any()
    # The torque arrow appears with the last torque, mirrored with its sign.
    state["last_u"] = 1.5
    engine.set_state(state, 0)
    pushed = engine.render()
    state["last_u"] = -1.5
    engine.set_state(state, 0)
    pulled = engine.render()
    assert (pushed != turned).any() and (pulled != turned).any() and (pushed != pulled).any()
    text = engine.render(mode="ansi")
    assert isinstance(text, str) and "torque=-1.500" in text


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_actions_are_rejected_before_any_episode_moves(bad):
    engine = vecenv.make(NAME, num_envs=3, seed=0)
    engine.step(np.array([[0.5], [-0.5], [1.0]], dtype=np.float32))
    before = engine.get_state()
    with pytest.raises(ValueError, match="env 2"):
        engine.step(np.array([[0.5], [0.1], [bad]], dtype=np.float32))
    np.testing.assert_array_equal(engine.get_state(), before)
