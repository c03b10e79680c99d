"""The single-episode Gymnasium face (gymnasium.make("vecenv/<id>"))."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import vecenv
from vecenv import registry

GYM_GAMES = [name for name, spec in registry.specs().items() if "id" in spec.gym]
# Games whose id gymnasium itself also registers (classic control): compared side by side.
TWINS = [name for name in GYM_GAMES if registry.get_spec(name).gym["id"] in gymnasium.registry]


def gym_id(game):
    return registry.get_spec(game).gym["id"]


def checker_warnings(env_id):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make(env_id, render_mode="rgb_array")
        check_env(env.unwrapped)
        env.close()
    return sorted({str(w.message) for w in caught})


@pytest.mark.parametrize("game", GYM_GAMES)
def test_registered_with_both_entry_points(game):
    spec = gymnasium.spec(f"vecenv/{gym_id(game)}")
    assert spec.entry_point and spec.vector_entry_point
    assert spec.max_episode_steps == registry.get_spec(game).gym.get("max_episode_steps")


@pytest.mark.parametrize("game", TWINS)
def test_check_env_warns_no_more_than_gymnasiums_own_env(game):
    ours = checker_warnings(f"vecenv/{gym_id(game)}")
    theirs = checker_warnings(gym_id(game))
    assert set(ours) <= set(theirs), set(ours) - set(theirs)


@pytest.mark.parametrize("game", sorted(set(GYM_GAMES) - set(TWINS)))
def test_check_env_passes_without_warnings(game):
    # gymnasium warns about every unbounded Box component; the specs declare those on purpose.
    warned = checker_warnings(f"vecenv/{gym_id(game)}")
    assert [w for w in warned if "infinity" not in w] == []


@pytest.mark.parametrize("game", TWINS)
def test_spaces_equal_gymnasiums(game):
    ours = gymnasium.make(f"vecenv/{gym_id(game)}")
    theirs = gymnasium.make(gym_id(game))
    assert ours.action_space == theirs.action_space
    o, t = ours.observation_space, theirs.observation_space
    assert o.shape == t.shape and o.dtype == t.dtype
    # gymnasium releases differ in writing unbounded components as inf or float32's max.
    big = np.finfo(np.float32).max
    np.testing.assert_array_equal(np.clip(o.low, -big, big), np.clip(t.low, -big, big))
    np.testing.assert_array_equal(np.clip(o.high, -big, big), np.clip(t.high, -big, big))


def test_time_limit_comes_from_gymnasium_and_truncates():
    env = gymnasium.make("vecenv/CartPole-v1", max_episode_steps=5)
    env.reset(seed=0)
    flags = [env.step(0 if k % 2 else 1)[3] for k in range(5)]
    assert flags == [False] * 4 + [True]


def test_step_returns_gymnasium_types():
    env = gymnasium.make("vecenv/CartPole-v1")
    obs, info = env.reset(seed=1)
    assert obs.dtype == np.float32 and obs.shape == (4,) and info == {}
    obs2, reward, terminated, truncated, info = env.step(np.int64(1))
    assert isinstance(reward, float) and reward == 1.0
    assert type(terminated) is bool and type(truncated) is bool
    obs2[0] = 123.0  # a fresh array each call
    assert env.unwrapped.engine.obs["obs"][0, 0, 0] != 123.0


def test_reset_seed_is_reproducible_and_matches_the_engine():
    env = gymnasium.make("vecenv/CartPole-v1")
    a, _ = env.reset(seed=5)
    b, _ = env.reset(seed=5)
    np.testing.assert_array_equal(a, b)
    engine = vecenv.make("cartpole", num_envs=3, seed=5)
    np.testing.assert_array_equal(a, engine.obs["obs"][0, 0])


@pytest.mark.parametrize("action", [2, -1, 1.0, "1", None, np.array([1]), True, 2**70])
def test_invalid_actions_raise_value_error_and_change_nothing(action):
    env = gymnasium.make("vecenv/CartPole-v1").unwrapped
    env.reset(seed=0)
    before = env.get_state()
    with pytest.raises(ValueError):
        env.step(action)
    np.testing.assert_array_equal(env.get_state(), before)


def test_get_and_set_state_replay_exactly():
    env = gymnasium.make("vecenv/CartPole-v1").unwrapped
    env.reset(seed=0)
    saved = env.get_state()
    env.step(1)
    assert saved["step"] == 0  # a copy, not a view of the live record
    env.set_state(saved)
    first = [env.step(k % 2)[0] for k in range(20)]
    env.set_state(saved)
    again = [env.step(k % 2)[0] for k in range(20)]
    np.testing.assert_array_equal(np.array(first), np.array(again))
    bad = env.get_state()
    bad["theta"] = np.nan
    with pytest.raises(ValueError, match="finite"):
        env.set_state(bad)


@pytest.mark.parametrize("game", GYM_GAMES)
def test_render_modes(game):
    env = gymnasium.make(f"vecenv/{gym_id(game)}", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3
    if "ansi" in env.metadata["render_modes"]:
        text = gymnasium.make(f"vecenv/{gym_id(game)}", render_mode="ansi")
        text.reset(seed=0)
        assert isinstance(text.render(), str)


def test_unknown_render_mode_is_refused():
    # gymnasium.make warns first (the mode is not in the class's metadata); the env refuses it.
    with pytest.warns(UserWarning, match="render_mode"), pytest.raises(ValueError, match="video"):
        gymnasium.make("vecenv/CartPole-v1", render_mode="video")


def test_configuration_passes_through_make():
    env = gymnasium.make("vecenv/CartPole-v1", sutton_barto_reward=True)
    env.reset(seed=0)
    assert env.step(1)[1] == 0.0
    with pytest.raises(ValueError, match="no configuration 'nope'"):
        gymnasium.make("vecenv/CartPole-v1", nope=1)
