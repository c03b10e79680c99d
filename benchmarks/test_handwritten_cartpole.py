"""The hand-written reference loop computes what gymnasium's CartPoleEnv computes (so the engine is
measured against the same work), in both variants. Not a benchmark: a quick check of the bar."""

import gymnasium
import numpy as np
import pytest
from handwritten_cartpole import HandwrittenCartPole


@pytest.mark.parametrize("parallel", [False, True])
def test_matches_gymnasium_cartpole(parallel):
    n = 64
    env = HandwrittenCartPole(n, parallel=parallel, seed=3)
    rng = np.random.default_rng(0)
    start = rng.uniform(-0.04, 0.04, size=(n, 4))
    env.x[:], env.x_dot[:], env.theta[:], env.theta_dot[:] = start.T
    actions = rng.integers(0, 2, size=n)
    env.step(actions)
    ref = gymnasium.make("CartPole-v1").unwrapped
    ref.reset(seed=0)
    for i in range(n):
        ref.state = start[i].copy()
        obs, reward, terminated, truncated, _ = ref.step(int(actions[i]))
        got = (env.x[i], env.x_dot[i], env.theta[i], env.theta_dot[i])
        assert got == tuple(ref.state)
        np.testing.assert_array_equal(env.obs[i], obs)
        assert env.rewards[i] == reward
        assert not env.terminated[i] and not env.truncated[i]


def test_same_step_autoreset_and_time_limit():
    env = HandwrittenCartPole(2, seed=1)
    env.x[0] = 2.4  # steps out of bounds at once
    env.steps[1] = 499  # reaches the 500-step limit at once
    env.step(np.zeros(2, dtype=np.int64))
    assert env.terminated[0] and not env.truncated[0]
    assert env.truncated[1]
    assert np.all(np.abs(env.obs) <= 0.05)  # both restarted in the same call
    assert np.all(env.steps == 0)
