"""MountainCarContinuous against gymnasium's MountainCarContinuous-v0.

gymnasium stores this game's state as float32 between steps; the comparisons below hold to
float64 round-off only if the rules reproduce those float32 roundings.
"""

import math

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control.continuous_mountain_car import Continuous_MountainCarEnv

import vecenv
from vecenv import registry

NAME = "mountaincar_continuous"
GYM_ID = "MountainCarContinuous-v0"
F32 = np.float32


def gym_state(env):
    return np.asarray(env.unwrapped.state, dtype=np.float64)


def our_state(engine, i=0):
    s = engine.get_state(i)
    return np.array([s["position"], s["velocity"]])


def assert_same_step(engine, i, obs, reward, terminated, truncated, env):
    np.testing.assert_allclose(our_state(engine, i), gym_state(env), rtol=1e-12, atol=1e-12)
    ours = engine.obs["obs"][i, 0]
    assert ours.dtype == obs.dtype == np.float32
    np.testing.assert_array_max_ulp(ours, obs, maxulp=1)
    np.testing.assert_allclose(engine.rewards[i, 0], reward, rtol=1e-12, atol=0)
    assert bool(engine.terminated[i]) == terminated
    assert bool(engine.truncated[i]) == truncated


def choose_action(rng, pump, velocity):
    """Pumped episodes push along the velocity (often harder than the clip); others act at random,
    out of range included."""
    if pump and rng.random() < 0.8:
        return F32((1.0 if velocity >= 0 else -1.0) * rng.choice([0.6, 1.0, 2.0, 3.5]))
    kind = rng.integers(4)
    if kind == 0:
        return F32(rng.choice([3.5, -3.5, 1.0, -1.0, 0.0]))
    return F32(rng.uniform(-1.5, 1.5))


def run_side_by_side(engine, env, min_steps, seed):
    """Episodes from our reset states, in both, until ``min_steps`` steps; returns the outcomes."""
    rng = np.random.default_rng(seed)
    n = engine.num_envs
    steps, outcomes, episode = 0, [], 0
    while steps < min_steps:
        i = episode % n
        mask = np.zeros(n, dtype=np.bool_)
        mask[i] = True
        engine.reset(mask=mask)
        env.reset(seed=int(rng.integers(2**31)))
        env.unwrapped.state = our_state(engine, i)
        pump = episode % 3 != 0
        while True:
            a = choose_action(rng, pump, env.unwrapped.state[1])
            actions = np.zeros((n, 1), dtype=np.float32)
            actions[i, 0] = a
            engine.step(actions)
            obs, reward, terminated, truncated, _ = env.step(np.array([a], dtype=np.float32))
            steps += 1
            assert_same_step(engine, i, obs, reward, terminated, truncated, env)
            if terminated or truncated:
                outcomes.append((terminated, truncated, engine.get_state(i)["step"]))
                break
        episode += 1
    return outcomes


def test_matches_gymnasium_step_by_step():
    engine = vecenv.make(NAME, num_envs=2, seed=21, autoreset="disabled")
    env = gymnasium.make(GYM_ID)
    outcomes = run_side_by_side(engine, env, min_steps=2500, seed=0)
    assert sum(term for term, _, _ in outcomes) >= 2, "too few episodes reached the flag"
    truncations = [steps for _, trunc, steps in outcomes if trunc]
    assert truncations and all(steps == 999 for steps in truncations)


def test_non_default_configuration_matches_gymnasium():
    engine = vecenv.make(
        NAME, num_envs=1, seed=4, autoreset="disabled", goal_velocity=0.03, episodeSteps=400
    )
    env = gymnasium.make(GYM_ID, goal_velocity=0.03, max_episode_steps=400)
    outcomes = run_side_by_side(engine, env, min_steps=1200, seed=3)
    assert any(term for term, _, _ in outcomes)
    assert all(steps == 400 for _, trunc, steps in outcomes if trunc)


def one_step_each(starts, actions, step, goal_velocity=0.0):
    """Step every (position, velocity) start once in ours and in gymnasium's env.

    ``step`` > 0 stands for a state reached by stepping, which gymnasium holds in float32; 0 for
    one just reset, in float64. Returns gymnasium's (state, terminated) per start.
    """
    n = len(starts)
    engine = vecenv.make(
        NAME, num_envs=n, seed=0, autoreset="disabled", goal_velocity=goal_velocity
    )
    state = engine.get_state()
    state["position"] = [p for p, _ in starts]
    state["velocity"] = [v for _, v in starts]
    state["step"] = step
    engine.set_state(state)
    engine.step(np.asarray(actions, dtype=np.float32).reshape(n, 1))
    results = []
    env = Continuous_MountainCarEnv(goal_velocity=goal_velocity)
    env.reset(seed=0)
    for i, ((p, v), a) in enumerate(zip(starts, actions, strict=True)):
        env.state = np.array([p, v], dtype=np.float32 if step else np.float64)
        obs, reward, terminated, truncated, _ = env.step(np.array([a], dtype=np.float32))
        assert_same_step(engine, i, obs, reward, terminated, truncated, env)
        results.append((gym_state(env), terminated))
    return results


def ulps_around(x, k):
    """The float32 values within ``k`` units in the last place of float32(x)."""
    x = F32(x)
    out = [x]
    up = down = x
    for _ in range(k):
        up, down = np.nextafter(up, F32(np.inf)), np.nextafter(down, F32(-np.inf))
        out += [up, down]
    return [float(v) for v in out]


def accel32(position, action):
    """gymnasium's velocity change from a float32 state and an in-range float32 action."""
    push = F32(action) * 0.0015
    return float(push - 0.0025 * math.cos(F32(3) * F32(position)))


@pytest.mark.parametrize("step", [0, 7])
def test_boundaries_match_gymnasium(step):
    starts, actions = [], []
    # Around the left wall, the flag, the right end and the speed limits, with every kind of
    # action: in range, on the bounds and clipped.
    for p in ulps_around(-1.2, 2) + ulps_around(0.45, 2) + ulps_around(0.6, 2):
        for v in [0.0, -1e-9, 1e-9, -0.07, 0.07, -0.0695, 0.0695, 0.002]:
            for a in [0.0, 0.4, -1.0, 1.0, 3.5, -3.5]:
                starts.append((p, v))
                actions.append(a)
    one_step_each(starts, actions, step)


def test_float32_comparisons_at_the_flag_match_gymnasium():
    # A float32 state is compared with float32 constants: arriving exactly at float32(0.45)
    # reaches the flag, although float32(0.45) < 0.45.
    flag = float(F32(0.45))
    starts = [(flag, v) for v in ulps_around(-accel32(flag, 0.0), 3)]
    results = one_step_each(starts, [0.0] * len(starts), step=3)
    assert any(state[0] == flag and term for state, term in results)
    # A velocity of exactly float32(0.07) is not clipped to the Python float 0.07, so it meets a
    # goal velocity between 0.07 and float32(0.07); a clipped one does not.
    goal = 0.07 + 1e-10
    p = 0.5
    starts = [(p, v) for v in ulps_around(float(F32(0.07)) - accel32(p, 0.0), 3)]
    results = one_step_each(starts, [0.0] * len(starts), step=3, goal_velocity=goal)
    assert any(term for _, term in results) and not all(term for _, term in results)


def test_reward_uses_the_unclipped_action_and_force_the_clipped_one():
    results = {}
    for a in [1.0, 3.5]:
        engine = vecenv.make(NAME, num_envs=1, seed=9, autoreset="disabled")
        engine.step(np.array([[a]], dtype=np.float32))
        results[a] = (our_state(engine), float(engine.rewards[0, 0]))
    np.testing.assert_array_equal(results[1.0][0], results[3.5][0])
    assert results[1.0][1] == pytest.approx(-0.1)
    assert results[3.5][1] == pytest.approx(-0.1 * 3.5**2)


def test_float64_actions_act_as_their_float32_rounding():
    runs = []
    for dtype in (np.float64, np.float32):
        engine = vecenv.make(NAME, num_envs=1, seed=2, autoreset="disabled")
        for a in [0.3, -0.7, 0.1, 2.2, -0.9]:
            engine.step(np.array([[a]], dtype=dtype))
        runs.append((our_state(engine), engine.rewards.copy()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_initial_states_within_gymnasium_ranges_and_varied():
    starts = []
    for seed in range(20):
        engine = vecenv.make(NAME, num_envs=64, seed=seed)
        for _ in range(3):
            s = engine.get_state()
            assert ((s["position"] >= -0.6) & (s["position"] < -0.4)).all()
            assert (s["velocity"] == 0.0).all()
            starts.append(s["position"].copy())
            engine.reset()
    starts = np.array(starts)
    assert len(np.unique(starts)) == starts.size
    assert starts.min() < -0.595 and starts.max() > -0.405


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
    assert spec.gym["reward_threshold"] == gym_spec.reward_threshold
    assert spec.configuration["episodeSteps"].default == gym_spec.max_episode_steps
    assert spec.render["fps"] == env.metadata["render_fps"]


def test_render_frames():
    spec = registry.get_spec(NAME)
    engine = vecenv.make(NAME, num_envs=1, seed=0)
    frame = engine.render()
    assert frame.dtype == np.uint8
    assert frame.shape == (spec.render["height"], spec.render["width"], 3)
    state = engine.get_state(0)
    state["position"] = -1.0
    engine.set_state(state, 0)
    moved = engine.render()
    assert (moved != frame).any()
    text = engine.render(mode="ansi")
    assert isinstance(text, str) and "position=-1.0000" in text


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_actions_are_rejected_before_any_episode_moves(bad):
    engine = vecenv.make(NAME, num_envs=3, seed=0)
    engine.step(np.array([[0.5], [-0.5], [1.0]], dtype=np.float32))
    before = engine.get_state()
    with pytest.raises(ValueError, match="env 1"):
        engine.step(np.array([[0.5], [bad], [0.2]], dtype=np.float32))
    np.testing.assert_array_equal(engine.get_state(), before)
