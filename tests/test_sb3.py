"""Stable-Baselines3's VecEnv over the engine: its conventions, its wrappers, PPO learning on it."""

import gymnasium
import numpy as np
import pytest

from tests.envs.reference import need

sb3 = need("stable_baselines3", "stable-baselines3 (vecenv[sb3])")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.vec_env import (  # noqa: E402
    DummyVecEnv,
    VecFrameStack,
    VecMonitor,
    VecNormalize,
)

from vecenv.sb3 import VecEnv  # noqa: E402


def dummy(gym_id, n):
    return DummyVecEnv([lambda: gymnasium.make(f"vecenv/{gym_id}") for _ in range(n)])


@pytest.mark.parametrize("gym_id", ["CartPole-v1", "Acrobot-v1", "Pendulum-v1"])
def test_steps_as_dummyvecenv_over_the_gymnasium_env_seeded_alike(gym_id):
    ours, theirs = VecEnv(gym_id, num_envs=4), dummy(gym_id, 4)
    ours.seed(7)
    theirs.seed(7)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(600):
        actions = np.stack([ours.action_space.sample() for _ in range(4)])
        if isinstance(ours.action_space, gymnasium.spaces.Discrete):
            actions = rng.integers(0, ours.action_space.n, 4)
        obs, rewards, dones, infos = ours.step(actions)
        t_obs, t_rewards, t_dones, t_infos = theirs.step(actions)
        np.testing.assert_array_equal(obs, t_obs)
        assert rewards.dtype == t_rewards.dtype == np.float32
        np.testing.assert_array_equal(rewards, t_rewards)
        np.testing.assert_array_equal(dones, t_dones)
        assert dones.dtype == np.bool_
        for mine, reference in zip(infos, t_infos, strict=True):
            assert mine["TimeLimit.truncated"] == reference["TimeLimit.truncated"]
            assert ("terminal_observation" in mine) == ("terminal_observation" in reference)
            if "terminal_observation" in mine:
                np.testing.assert_array_equal(
                    mine["terminal_observation"], reference["terminal_observation"]
                )
        ended += int(dones.sum())
    assert ended > 0  # the autoreset path was exercised


def test_a_time_limit_is_a_truncation_with_the_terminal_observation():
    env = VecEnv("CartPole-v1", num_envs=2, max_episode_steps=5)
    env.seed(0)
    env.reset()
    for _ in range(4):
        _, _, dones, _ = env.step(np.zeros(2, dtype=np.int64))
        assert not dones.any()
    obs, _, dones, infos = env.step(np.array([0, 0]))
    assert dones.all() and all(i["TimeLimit.truncated"] for i in infos)
    assert all(i["terminal_observation"].shape == (4,) for i in infos)
    assert not np.array_equal(obs, np.stack([i["terminal_observation"] for i in infos]))


def test_reset_uses_the_seed_once_then_continues_the_streams():
    env = VecEnv("CartPole-v1", num_envs=3)
    env.seed(5)
    first = env.reset()
    second = env.reset()  # unseeded: new starts
    env.seed(5)
    np.testing.assert_array_equal(env.reset(), first)
    assert not np.array_equal(first, second)
    other = VecEnv("CartPole-v1", num_envs=3, seed=5)
    np.testing.assert_array_equal(other.reset(), first)


def test_threads_do_not_change_trajectories():
    def run(threads):
        env = VecEnv("CartPole-v1", num_envs=2048, num_threads=threads, seed=3)
        env.reset()
        rng = np.random.default_rng(1)
        out = []
        for _ in range(50):
            obs, rewards, dones, _ = env.step(rng.integers(0, 2, 2048))
            out.append(obs.copy())
        return np.stack(out)

    np.testing.assert_array_equal(run(1), run(2))


def test_sb3_wrappers_run_on_it():
    env = VecMonitor(VecEnv("CartPole-v1", num_envs=4, seed=0))
    env.reset()
    returns, mine = [], np.zeros(4)
    for _ in range(200):
        _, rewards, dones, infos = env.step(np.ones(4, dtype=np.int64))
        mine += rewards
        for i in np.flatnonzero(dones):
            returns.append((infos[i]["episode"]["r"], mine[i]))
            assert infos[i]["episode"]["l"] == mine[i]  # CartPole pays 1 a step
            mine[i] = 0
    assert returns and all(r == pytest.approx(m) for r, m in returns)
    norm = VecNormalize(VecEnv("Pendulum-v1", num_envs=8, seed=0))
    norm.reset()
    before = norm.obs_rms.mean.copy()
    for _ in range(20):
        obs, *_ = norm.step(np.zeros((8, 1), dtype=np.float32))
    assert not np.allclose(norm.obs_rms.mean, before) and np.abs(obs).max() <= norm.clip_obs
    stacked = VecFrameStack(VecEnv("CartPole-v1", num_envs=3, seed=0), n_stack=4)
    assert stacked.reset().shape == (3, 16)
    assert stacked.step(np.zeros(3, dtype=np.int64))[0].shape == (3, 16)


def test_a_two_agent_game_plays_against_its_builtin_opponent():
    env = VecEnv("connectx", num_envs=6, seed=1, opponent="random")
    obs = env.reset()
    assert set(obs) == {"board", "legal", "mark"} and obs["board"].shape == (6, 42)
    assert isinstance(env.observation_space, gymnasium.spaces.Dict)
    ended = 0
    rng = np.random.default_rng(0)
    for _ in range(60):
        legal = obs["legal"]
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in legal])
        obs, rewards, dones, infos = env.step(actions)
        ended += int(dones.sum())
        assert set(np.unique(rewards[dones])) <= {-1.0, 0.0, 1.0}
    assert ended > 0


def test_attributes_methods_and_bad_input():
    env = VecEnv("CartPole-v1", num_envs=3, seed=0, render_mode="rgb_array")
    env.reset()
    assert env.get_attr("name") == ["cartpole"] * 3 and env.get_attr("name", [1]) == ["cartpole"]
    assert env.env_is_wrapped(VecMonitor) == [False] * 3
    with pytest.raises(AttributeError):
        env.get_attr("gravity")
    with pytest.raises(AttributeError):
        env.set_attr("name", "x")
    images = env.get_images()
    assert len(images) == 3 and images[0].ndim == 3 and images[0].dtype == np.uint8
    state = env.env_method("get_state", indices=[0])[0]
    env.step(np.zeros(3, dtype=np.int64))
    env.env_method("set_state", state, indices=[2])
    np.testing.assert_array_equal(env.env_method("get_state", indices=[2])[0], state)
    before = env.engine.get_state()
    for bad in (np.array([0, 1]), np.array([0, 1, 2]), np.array([0.5, 0, 1]), np.full(3, np.nan)):
        env.step_async(bad)
        with pytest.raises(ValueError):
            env.step_wait()
    np.testing.assert_array_equal(env.engine.get_state(), before)  # nothing moved
    with pytest.raises(IndexError):
        env.get_attr("name", [3])


def test_sb3_ppo_learns_cartpole_on_it():
    torch = need("torch", "PyTorch (vecenv[sb3])")
    torch.set_num_threads(1)
    env = VecEnv("CartPole-v1", num_envs=8, seed=0)
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=256,
        gae_lambda=0.8,
        gamma=0.98,
        n_epochs=20,
        ent_coef=0.0,
        learning_rate=1e-3,
        clip_range=0.2,
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=40_000)
    evaluation = VecMonitor(VecEnv("CartPole-v1", num_envs=4, seed=99))
    mean, _ = evaluate_policy(model, evaluation, n_eval_episodes=8)
    assert mean >= 150  # a random policy scores about 22
