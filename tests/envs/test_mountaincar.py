"""MountainCar against gymnasium's MountainCar-v0: dynamics, rewards, limits, spaces, frames."""

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

import vecenv
from vecenv import registry

NAME = "mountaincar"
GYM_ID = "MountainCar-v0"


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


def run_side_by_side(engine, env, min_steps, seed):
    """Episodes from our reset states, in both, until ``min_steps`` steps.

    Returns each episode's (terminated, truncated, steps) and how many steps ended at or past the
    flag without terminating (too slow for goal_velocity).

    Half the episodes pump energy (push along the velocity) so that they reach the flag, with
    random actions mixed in; the others act at random and run into the time limit.
    """
    rng = np.random.default_rng(seed)
    n = engine.num_envs
    steps, outcomes, episode, slow = 0, [], 0, 0
    while steps < min_steps:
        i = episode % n
        mask = np.zeros(n, dtype=np.bool_)
        mask[i] = True
        engine.reset(mask=mask)
        env.reset(seed=int(rng.integers(2**31)))
        env.unwrapped.state = our_state(engine, i)
        pump = episode % 2 == 0
        while True:
            if pump and rng.random() < 0.85:
                a = 2 if env.unwrapped.state[1] >= 0 else 0
            else:
                a = int(rng.integers(3))
            actions = np.ones(n, dtype=np.int64)
            actions[i] = a
            engine.step(actions)
            obs, reward, terminated, truncated, _ = env.step(a)
            steps += 1
            assert_same_step(engine, i, obs, reward, terminated, truncated, env)
            slow += bool(obs[0] >= 0.5 and not terminated)
            if terminated or truncated:
                outcomes.append((terminated, truncated, engine.get_state(i)["step"]))
                break
        episode += 1
    return outcomes, slow


def test_matches_gymnasium_step_by_step():
    engine = vecenv.make(NAME, num_envs=3, seed=11, autoreset="disabled")
    env = gymnasium.make(GYM_ID)
    outcomes, _ = run_side_by_side(engine, env, min_steps=1500, seed=0)
    assert any(term for term, _, _ in outcomes), "no episode reached the flag"
    truncations = [steps for _, trunc, steps in outcomes if trunc]
    assert truncations and all(steps == 200 for steps in truncations)


def test_non_default_configuration_matches_gymnasium():
    # About half the pumped episodes reach the flag slower than 0.04 and must carry on.
    engine = vecenv.make(
        NAME, num_envs=2, seed=5, autoreset="disabled", goal_velocity=0.04, episodeSteps=150
    )
    env = gymnasium.make(GYM_ID, goal_velocity=0.04, max_episode_steps=150)
    outcomes, slow = run_side_by_side(engine, env, min_steps=1000, seed=1)
    assert any(term for term, _, _ in outcomes)
    assert slow > 0
    assert all(steps == 150 for _, trunc, steps in outcomes if trunc)


@pytest.mark.parametrize(
    ("position", "velocity", "action"),
    [
        (-1.19, -0.05, 0),  # hits the left wall: the velocity drops to 0
        (-1.2, 0.0, 0),  # pressed against the wall
        (-1.25, -0.01, 1),  # off the track: clipped back onto it
        (0.49, 0.07, 2),  # reaches the flag
        (0.55, 0.1, 2),  # beyond the speed limit
        (0.7, -0.2, 0),  # beyond the right end
    ],
)
def test_edge_states_match_gymnasium(position, velocity, action):
    engine = vecenv.make(NAME, num_envs=1, seed=0, autoreset="disabled")
    state = engine.get_state(0)
    state["position"], state["velocity"] = position, velocity
    engine.set_state(state, 0)
    env = gymnasium.make(GYM_ID)
    env.reset(seed=0)
    env.unwrapped.state = np.array([position, velocity])
    for _ in range(5):
        engine.step(np.array([action]))
        obs, reward, terminated, truncated, _ = env.step(action)
        assert_same_step(engine, 0, obs, reward, terminated, truncated, env)
        if terminated:
            break


def test_initial_states_within_gymnasium_ranges_and_varied():
    starts = []
    for seed in range(20):
        engine = vecenv.make(NAME, num_envs=64, seed=seed)
        for _ in range(3):
            s = engine.get_state()
            assert ((s["position"] >= -0.6) & (s["position"] < -0.4)).all()
            assert (s["velocity"] == 0.0).all()
            assert (s["step"] == 0).all()
            starts.append(s["position"].copy())
            engine.reset()
    starts = np.array(starts)
    # Every reset of every episode draws afresh, and the draws cover the range.
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
    assert spec.action.discrete
    n = int(spec.action.high[0] - spec.action.low[0]) + 1
    assert spaces.Discrete(n, start=int(spec.action.low[0])) == env.action_space
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
    state["position"] = 0.3
    engine.set_state(state, 0)
    moved = engine.render()
    assert moved.shape == frame.shape
    assert (moved != frame).any()
    text = engine.render(mode="ansi")
    assert isinstance(text, str) and "position=+0.3000" in text


def test_bad_actions_are_rejected_before_any_episode_moves():
    engine = vecenv.make(NAME, num_envs=3, seed=0)
    engine.step(np.array([0, 1, 2]))
    before = engine.get_state()
    with pytest.raises(ValueError, match="env 1"):
        engine.step(np.array([2, 3, 0]))
    with pytest.raises(ValueError, match="integers"):
        engine.step(np.array([0.0, np.nan, 1.0]))
    np.testing.assert_array_equal(engine.get_state(), before)
