"""Episode i's trajectory depends only on the seed, i and its actions."""

import numpy as np
import pytest

import vecenv
from vecenv import registry
from vecenv.engine import PARALLEL_MIN_ENVS

from .test_engine import random_actions


def rollout(game, num_envs, num_threads, steps, seed=123, action_seed=7, autoreset="next_step"):
    e = vecenv.make(
        game,
        num_envs=num_envs,
        seed=seed,
        num_threads=num_threads,
        autoreset=autoreset,
        max_episode_steps=50,
    )
    rng = np.random.default_rng(action_seed)
    # Actions drawn for the largest batch, so every batch size sees the same per-episode actions.
    width = 64
    trace = []
    for _ in range(steps):
        full = random_actions(e, rng, width)
        obs, rewards, terminated, truncated = e.step(full[:num_envs])
        trace.append(
            (
                obs[e.spec.observation[0].name].copy(),
                rewards.copy(),
                terminated.copy(),
                truncated.copy(),
                e.get_state(),
            )
        )
    return trace


@pytest.mark.parametrize("game", registry.list_envs())
def test_one_and_two_threads_are_bit_identical(game):
    n = PARALLEL_MIN_ENVS + 3  # large enough to take the parallel loop
    one, two = (
        vecenv.make(game, num_envs=n, seed=5, num_threads=t, max_episode_steps=30, parallel=t > 1)
        for t in (1, 2)
    )
    assert two.uses_threads and not one.uses_threads
    rng = np.random.default_rng(3)
    for _ in range(40):
        actions = random_actions(one, rng)
        for x, y in zip(one.step(actions)[1:], two.step(actions)[1:], strict=True):
            np.testing.assert_array_equal(x, y)
        for name in one.obs:
            np.testing.assert_array_equal(one.obs[name], two.obs[name])
        np.testing.assert_array_equal(one.get_state(), two.get_state())


@pytest.mark.parametrize("game", registry.list_envs())
def test_episode_i_is_the_same_for_any_batch_size(game):
    big = rollout(game, 40, 1, 120)
    for n in (1, 7, 39):
        small = rollout(game, n, 1, 120)
        for a, b in zip(big, small, strict=False):
            for x, y in zip(a, b, strict=False):
                np.testing.assert_array_equal(x[:n], y)


def test_different_seeds_differ():
    a = rollout("cartpole", 8, 1, 5, seed=1)
    b = rollout("cartpole", 8, 1, 5, seed=2)
    assert not np.array_equal(a[0][0], b[0][0])
