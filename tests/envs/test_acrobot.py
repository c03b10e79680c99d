"""Acrobot against gymnasium's AcrobotEnv: dynamics, initial states, frames, bad states.

Spaces, registration, frames following the state and bad actions: test_classic_control.py.
"""

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control.acrobot import AcrobotEnv

import vecenv
from vecenv import registry

from .side_by_side import ACROBOT as GAME


def pump(obs):
    """Torque along the elbow's velocity: pumps energy in, so episodes reach the target line."""
    return 2 if obs[5] > 0 else 0


@pytest.mark.parametrize("mode", ["book", "nips"])
def test_trajectories_are_bit_identical_to_gymnasium(mode):
    """Whole trajectories, compared bit for bit with no re-synchronisation.

    Each episode starts from our reset state, injected into gymnasium as the float32 array its own
    reset would hold; from there states, observations, rewards, terminated and truncated (at step
    500, by gymnasium's TimeLimit) must be equal. Env 0 plays a fixed random action sequence (it
    mostly runs into the time limit); env 1 mixes that sequence with an energy-pumping rule on the
    current observation, so its episodes end by termination.

    The one tolerance: gymnasium computes the reset observation's cos/sin from its float32 state
    with numpy's float32 routines, which may be one float32 ulp off the correctly rounded value we
    write; later observations come from float64 states on both sides and are compared exactly.
    """
    num_envs, episodes = 2, 3
    engine = vecenv.make(
        GAME.name, num_envs=num_envs, seed=2024, autoreset="disabled", book_or_nips=mode
    )
    refs = []
    for _ in range(num_envs):
        ref = gymnasium.make(GAME.gym_id)
        ref.unwrapped.book_or_nips = mode
        refs.append(ref)
    rng = np.random.default_rng(7)
    sequence = rng.integers(0, 3, size=(episodes, 500, num_envs))
    use_pump = rng.random(size=(episodes, 500)) < 0.8
    steps = terminations = truncations = 0
    for ep in range(episodes):
        if ep:
            engine.reset(mask=np.ones(num_envs, dtype=bool))
        start = engine.get_state()
        for i, ref in enumerate(refs):
            ref.reset(seed=ep)  # restarts the TimeLimit's count
            ref.unwrapped.state = GAME.values(start[i]).astype(np.float32)
            obs = ref.unwrapped._get_ob()
            ours = engine.obs["obs"][i, 0]
            np.testing.assert_array_max_ulp(ours[:4], obs[:4], maxulp=1)
            np.testing.assert_array_equal(ours[4:], obs[4:])
        running = np.ones(num_envs, dtype=bool)
        for t in range(500):
            actions = sequence[ep, t].copy()
            if use_pump[ep, t]:
                actions[1] = pump(engine.obs["obs"][1, 0])
            engine.step(actions)
            state = engine.get_state()
            for i, ref in enumerate(refs):
                if not running[i]:
                    continue
                obs, reward, term, trunc, _ = ref.step(int(actions[i]))
                np.testing.assert_array_equal(
                    GAME.values(state[i]),
                    ref.unwrapped.state,
                    err_msg=f"state of env {i}, episode {ep}, step {t}",
                )
                np.testing.assert_array_equal(engine.obs["obs"][i, 0], obs)
                assert engine.rewards[i, 0] == reward
                assert bool(engine.terminated[i]) == term
                assert bool(engine.truncated[i]) == trunc
                steps += 1
                if term or trunc:
                    running[i] = False
                    terminations += term
                    truncations += trunc
            if not running.any():
                break
        assert not running.any()
    assert steps >= 1000
    assert terminations >= 2 and truncations >= 1


def test_dynamics_variants_differ():
    book = vecenv.make(GAME.name, num_envs=4, seed=3, book_or_nips="book")
    nips = vecenv.make(GAME.name, num_envs=4, seed=3, book_or_nips="nips")
    np.testing.assert_array_equal(book.get_state(), nips.get_state())
    actions = np.array([0, 1, 2, 2])
    for _ in range(5):
        book.step(actions)
        nips.step(actions)
    assert not np.array_equal(book.obs["obs"], nips.obs["obs"])


def test_initial_states_are_uniform_in_a_tenth():
    engine = vecenv.make(GAME.name, num_envs=256, seed=0)
    starts = []
    for seed in range(20):
        engine.reset(seed=seed)
        starts.append(np.stack([engine.states[f] for f in GAME.fields], axis=1))
    starts = np.concatenate(starts)
    # gymnasium holds its initial state in float32, so the bounds are float32's nearest to 0.1.
    assert (starts >= np.float32(-0.1)).all() and (starts <= np.float32(0.1)).all()
    np.testing.assert_array_equal(starts.astype(np.float32).astype(np.float64), starts)
    assert (starts.min(axis=0) < -0.099).all() and (starts.max(axis=0) > 0.099).all()
    assert abs(starts.mean()) < 0.005
    assert len(np.unique(starts[:, 0])) > 0.99 * len(starts)


def test_three_actions_500_steps_and_a_500_square_frame_as_gymnasium():
    spec = registry.get_spec(GAME.name)
    assert AcrobotEnv().action_space == spaces.Discrete(3)
    assert gymnasium.spec(GAME.gym_id).max_episode_steps == 500
    assert spec.gym["max_episode_steps"] == spec.configuration["episodeSteps"].default == 500
    assert spec.render["height"] == spec.render["width"] == 500


def test_configuration_rejects_unknown_dynamics():
    with pytest.raises(ValueError, match="book_or_nips"):
        vecenv.make(GAME.name, book_or_nips="paper")


def test_render_matches_gymnasium_frames_up_to_antialiasing():
    pytest.importorskip("pygame")
    engine = vecenv.make(GAME.name, num_envs=1, seed=0)
    ref = AcrobotEnv(render_mode="rgb_array")
    ref.reset(seed=0)
    rng = np.random.default_rng(1)
    try:
        for _ in range(4):
            state = engine.get_state(0)
            state["theta1"], state["theta2"] = rng.uniform(-np.pi, np.pi, size=2)
            engine.set_state(state, 0)
            ref.state = GAME.values(state)
            ours, theirs = engine.render(0), ref.render()
            drawn = np.any(theirs != 255, axis=2).sum()
            differ = np.any(ours != theirs, axis=2).sum()
            # Only the links' and joints' anti-aliased rims may differ.
            assert differ < 0.15 * drawn
    finally:
        ref.close()


def test_set_state_rejects_states_outside_the_reachable_bounds():
    engine = vecenv.make(GAME.name, num_envs=2, seed=1)
    before = engine.get_state()
    bad = engine.get_state()
    bad["dtheta2"][1] = 1e300
    with pytest.raises(ValueError, match="dtheta2"):
        engine.set_state(bad)
    np.testing.assert_array_equal(engine.get_state(), before)


@pytest.mark.parametrize("mode", ["book", "nips"])
def test_one_step_map_is_bit_identical_over_the_whole_state_box(mode):
    """From states spread over all of STATE_BOUNDS, where the wrap and the velocity clamps act."""
    n = 1000
    rng = np.random.default_rng(11)
    engine = vecenv.make(GAME.name, num_envs=n, seed=0, autoreset="disabled", book_or_nips=mode)
    bounds = engine.rules.STATE_BOUNDS
    states = engine.get_state()
    for f in GAME.fields:
        lo, hi = bounds[f]
        states[f] = rng.uniform(lo, hi, size=n)
    states["dtheta1"][:50] = bounds["dtheta1"][1]
    states["dtheta2"][50:100] = bounds["dtheta2"][0]
    engine.set_state(states)
    actions = rng.integers(0, 3, size=n)
    engine.step(actions)
    after = engine.get_state()
    ref = AcrobotEnv()
    ref.reset(seed=0)
    ref.book_or_nips = mode
    clamped = wrapped = terminated = 0
    for i in range(n):
        ref.state = GAME.values(states[i])
        obs, reward, term, _, _ = ref.step(int(actions[i]))
        np.testing.assert_array_equal(GAME.values(after[i]), ref.state, err_msg=f"state {i}")
        np.testing.assert_array_equal(engine.obs["obs"][i, 0], obs)
        assert (engine.rewards[i, 0], bool(engine.terminated[i])) == (reward, term)
        clamped += (
            abs(ref.state[2]) == bounds["dtheta1"][1] or abs(ref.state[3]) == bounds["dtheta2"][1]
        )
        wrapped += abs(ref.state[0] - states[i]["theta1"]) > np.pi
        terminated += term
    assert clamped > 10 and wrapped > 10 and terminated > 10
