"""The Gymnasium VectorEnv face against gymnasium's own vector envs."""

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from vecenv import registry
from vecenv.engine import PARALLEL_MIN_ENVS

GYM_GAMES = [name for name, spec in registry.specs().items() if "id" in spec.gym]
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]


def gym_id(game):
    return f"vecenv/{registry.get_spec(game).gym['id']}"


def assert_tree_equal(a, b):
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=False):
            assert_tree_equal(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_tree_equal(a[k], b[k])
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert a.shape == b.shape
        for x, y in zip(a, b, strict=False):
            assert (x is None) == (y is None)
            if x is not None:
                assert_tree_equal(x, y)  # an observation: an array, or a dict of arrays
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("game", GYM_GAMES)
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_matches_sync_vector_env_of_single_envs(game, mode):
    """Same seeds give the same streams, so every output of every step must agree."""
    n, steps = 4, 160
    env_id = gym_id(game)
    ours = gymnasium.make_vec(env_id, num_envs=n, autoreset_mode=mode, max_episode_steps=25)
    ref = SyncVectorEnv(
        [lambda: gymnasium.make(env_id, max_episode_steps=25)] * n, autoreset_mode=mode
    )
    seeds = [11, 12, 13, 14]
    assert_tree_equal(ours.reset(seed=seeds), ref.reset(seed=seeds))
    ref.action_space.seed(3)
    for _ in range(steps):
        actions = ref.action_space.sample()
        got, want = ours.step(actions), ref.step(actions)
        for x, y in zip(got, want, strict=False):
            assert_tree_equal(x, y)
        if mode == AutoresetMode.DISABLED:
            done = want[2] | want[3]
            if done.any():
                assert_tree_equal(
                    ours.reset(options={"reset_mask": done}),
                    ref.reset(options={"reset_mask": done}),
                )


def test_matches_gymnasiums_cartpole_vector_env_on_injected_states():
    """gymnasium's numpy CartPoleVectorEnv (next-step autoreset) fed our start states."""
    n = 16
    ours = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=n)
    ref = gymnasium.make_vec("CartPole-v1", num_envs=n, vectorization_mode="vector_entry_point")
    obs, _ = ours.reset(seed=1)
    ref.reset(seed=1)
    fields = ("x", "x_dot", "theta", "theta_dot")

    def inject(where):
        state = ours.get_state()
        for k, f in enumerate(fields):
            ref.unwrapped.state[k, where] = state[f][where]

    inject(np.arange(n))
    rng = np.random.default_rng(0)
    episodes_ended = 0
    for _ in range(600):
        actions = rng.integers(0, 2, n)
        o, r, te, tr, _ = ours.step(actions)
        ro, rr, rte, rtr, _ = ref.step(actions)
        restarted = ours.get_state()["step"] == 0
        # gymnasium draws its own start states: compare the rest, then give it ours.
        keep = ~restarted
        np.testing.assert_array_equal(o[keep], ro[keep])
        np.testing.assert_array_equal(r, rr)
        np.testing.assert_array_equal(te, rte)
        np.testing.assert_array_equal(tr, rtr)
        if restarted.any():
            inject(np.flatnonzero(restarted))
        episodes_ended += int((te | tr).sum())
    assert episodes_ended > 20


def test_spaces_and_metadata():
    env = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=3)
    assert env.num_envs == 3
    assert env.single_action_space == gymnasium.spaces.Discrete(2)
    assert env.action_space == gymnasium.spaces.MultiDiscrete([2, 2, 2])
    assert env.observation_space.shape == (3, 4)
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    same = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=3, autoreset_mode="SameStep")
    assert same.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP


def test_threads_do_not_change_results():
    n = PARALLEL_MIN_ENVS + 1  # takes the parallel loop
    a = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=n, num_threads=1)
    b = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=n, num_threads=2, parallel=True)
    assert b.unwrapped.num_threads == 2
    a.reset(seed=9)
    b.reset(seed=9)
    rng = np.random.default_rng(1)
    for _ in range(40):
        act = rng.integers(0, 2, n)
        for x, y in zip(a.step(act)[:4], b.step(act)[:4], strict=False):
            np.testing.assert_array_equal(x, y)


def test_copy_false_returns_reused_buffers():
    env = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=2, copy=False)
    env.reset(seed=0)
    first = env.step(np.array([0, 1]))[0]
    second = env.step(np.array([0, 1]))[0]
    assert first is second
    fresh = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=2)
    fresh.reset(seed=0)
    assert fresh.step(np.array([0, 1]))[0] is not fresh.step(np.array([0, 1]))[0]


@pytest.mark.parametrize(
    "actions", [[0, 1, 2], [0.0, 1.0, 0.0], [0, 1], [[0], [1]], np.array([0, -1, 0])]
)
def test_bad_actions_raise_and_change_nothing(actions):
    env = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=3)
    env.reset(seed=0)
    before = env.unwrapped.get_state()
    with pytest.raises(ValueError):
        env.step(actions)
    np.testing.assert_array_equal(env.unwrapped.get_state(), before)


def test_reset_mask_must_be_bool_of_n():
    env = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=3)
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": np.array([1, 0, 1])})


def test_render_returns_one_frame_per_env():
    env = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=2, render_mode="rgb_array")
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2 and frames[0].shape == (400, 600, 3)
