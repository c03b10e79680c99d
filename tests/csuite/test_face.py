"""The CSuite face on every game whose spec has a "csuite" section: csuite's own contract tests
(csuite_test.py, dm_env_wrapper_test.py), csuite's spec values, seeding, errors."""

import dataclasses

import dm_env
import numpy as np
import pytest
from absl.testing import absltest
from dm_env import specs, test_utils

import vecenv
from vecenv import csuite, registry

GAMES = {
    spec.raw["csuite"]["name"]: folder
    for folder, spec in registry.specs().items()
    if "csuite" in spec.raw
}
NAMES = sorted(GAMES)

# csuite's specs at the default parameters (observation_spec(), action_spec() of each class).
INF = np.inf
CSUITE_SPECS = {
    "access_control": (specs.DiscreteArray(44, dtype=int, name="observation"), 2),
    "catch": (specs.BoundedArray((10, 5), int, 0, 1, name="board"), 3),
    "dancing_catch": (specs.BoundedArray((50,), int, 0, 1, name="board"), 3),
    "pendulum": (specs.BoundedArray((3,), np.float32, [-1, -1, -INF], [1, 1, INF]), 3),
    "pendulum_poke": (specs.BoundedArray((3,), np.float32, [-1, -1, -INF], [1, 1, INF]), 3),
    "taxi": (specs.DiscreteArray(500, dtype=int, name="observation"), 6),
    "windy_catch": (specs.BoundedArray((53,), int, 0, 1, name="board"), 3),
}
# csuite's get_config() at the defaults, for the classes that have one.
CSUITE_PARAMS = {
    "access_control": {"num_servers": 10, "free_probability": 0.06, "priorities": (1, 2, 4, 8)},
    "catch": {"rows": 10, "columns": 5, "spawn_probability": 0.1},
    "dancing_catch": {
        "rows": 10,
        "columns": 5,
        "observation_dim": 50,
        "spawn_probability": 0.1,
        "swap_every": 10000,
    },
    "windy_catch": {
        "rows": 10,
        "columns": 5,
        "observation_dim": 53,
        "spawn_probability": 0.1,
        "change_every": 100000,
    },
}


def random_actions(env, rng, n):
    spec = env.action_spec()
    return rng.integers(0, spec.num_values, size=n).tolist()


def assert_image(image):
    assert isinstance(image, np.ndarray)
    assert image.ndim == 3 and image.shape[-1] == 3 and image.dtype == np.uint8


def test_env_names_are_csuites():
    assert {e.value for e in csuite.EnvName} == set(CSUITE_SPECS)
    assert {e.name for e in csuite.EnvName} == {v.upper() for v in CSUITE_SPECS}
    assert csuite.EnvName("catch") is csuite.EnvName.CATCH


def test_every_csuite_game_is_registered_for_gymnasium_without_a_time_limit():
    import gymnasium

    for name, folder in GAMES.items():
        spec = registry.get_spec(folder)
        assert "max_episode_steps" not in spec.gym, name
        assert "episodeSteps" not in spec.configuration, name
        assert "seed" not in spec.configuration, name
        assert gymnasium.spec(f"vecenv/{spec.gym['id']}").max_episode_steps is None


@pytest.mark.parametrize("name", NAMES)
def test_load_by_name_or_enum(name):
    a = csuite.load(name)
    b = csuite.load(csuite.EnvName(name), {})
    assert a.observation_spec() == b.observation_spec()
    assert not a.started and a.get_state() is None


@pytest.mark.parametrize("name", NAMES)
def test_specs_are_csuites(name):
    obs_spec, num_actions = CSUITE_SPECS[name]
    env = csuite.load(name)
    ours = env.observation_spec()
    assert type(ours) is type(obs_spec)
    assert ours.shape == obs_spec.shape and ours.dtype == obs_spec.dtype
    assert ours.name == obs_spec.name
    if isinstance(obs_spec, specs.BoundedArray):
        np.testing.assert_array_equal(
            np.broadcast_to(ours.minimum, ours.shape), np.broadcast_to(obs_spec.minimum, ours.shape)
        )
        np.testing.assert_array_equal(
            np.broadcast_to(ours.maximum, ours.shape), np.broadcast_to(obs_spec.maximum, ours.shape)
        )
    if isinstance(obs_spec, specs.DiscreteArray):
        assert ours.num_values == obs_spec.num_values
    assert env.action_spec() == specs.DiscreteArray(num_actions, dtype=int, name="action")


@pytest.mark.parametrize("name", sorted(set(CSUITE_PARAMS) & set(NAMES)))
def test_get_config_has_csuites_parameters(name):
    config = csuite.load(name).get_config()
    values = {
        k: tuple(v) if isinstance(v, list) else v for k, v in dataclasses.asdict(config).items()
    }
    assert values == CSUITE_PARAMS[name]
    assert list(values) == list(CSUITE_PARAMS[name])  # csuite's attribute order
    config2 = csuite.load(name).get_config()
    assert config2 == config and config2 is not config


@pytest.mark.parametrize("name", NAMES)
def test_typical_use(name):
    """csuite_test.test_envs: start, render, get_state, steps validated against the spec."""
    env = csuite.load(name)
    action_spec = env.action_spec()
    observation_spec = env.observation_spec()
    obs = env.start()
    assert env.started
    assert_image(env.render())
    init_state = env.get_state()
    rng = np.random.default_rng(0)
    for i in range(60):
        assert_image(env.render())
        observation_spec.validate(obs)
        assert isinstance(obs, np.ndarray) and obs.dtype == observation_spec.dtype
        action = action_spec.generate_value() if i < 2 else random_actions(env, rng, 1)[0]
        obs, reward = env.step(action)
        assert type(reward) is float and np.isfinite(reward)
    env.set_state(init_state)
    np.testing.assert_array_equal(env.get_state(), init_state)


@pytest.mark.parametrize("name", NAMES)
def test_state_resets(name):
    """csuite_test.test_env_state_resets, with random actions as well as constant ones."""
    env = csuite.load(name, {"seed": 7})
    env.start()
    rng = np.random.default_rng(1)
    num_values = env.action_spec().num_values
    plans = [[a] * 4 for a in range(num_values)] + [random_actions(env, rng, 40) for _ in range(3)]
    for plan in plans:
        env.step(plan[0])
        saved = env.get_state()
        first = [env.step(a) for a in plan]
        env.set_state(saved)
        second = [env.step(a) for a in plan]
        for (o1, r1), (o2, r2) in zip(first, second, strict=True):
            np.testing.assert_array_equal(o1, o2)
            assert r1 == r2


@pytest.mark.parametrize("name", NAMES)
def test_observations_are_fresh_arrays(name):
    env = csuite.load(name)
    first = env.start()
    kept = first.copy()
    obs, _ = env.step(0)
    np.testing.assert_array_equal(first, kept)  # stepping did not overwrite it
    obs[...] = 0 if obs.dtype.kind in "iu" else 5.0
    state = env.get_state()
    assert env.get_state() is not state
    env.set_state(state)


@pytest.mark.parametrize("name", NAMES)
def test_seeding(name):
    """start(seed) repeats; start() uses the loaded seed; a loaded seed of None is fresh each
    start; start(seed) is episode 0 of vecenv.make(game, seed=seed)."""
    env = csuite.load(name)
    a = env.start(seed=3)
    state = env.get_state()
    run_a = [env.step(1) for _ in range(30)]
    b = env.start(seed=3)
    run_b = [env.step(1) for _ in range(30)]
    np.testing.assert_array_equal(a, b)
    for (o1, r1), (o2, r2) in zip(run_a, run_b, strict=True):
        np.testing.assert_array_equal(o1, o2)
        assert r1 == r2

    seeded = csuite.load(name, {"seed": 3})
    seeded.start()
    np.testing.assert_array_equal(seeded.get_state(), state)
    seeded.start(seed=4)
    assert seeded.get_state().rng != state.rng
    seeded.start()
    np.testing.assert_array_equal(seeded.get_state(), state)

    words = set()
    for _ in range(3):
        env.start()
        words.add(int(env.get_state().rng))
    assert len(words) == 3

    engine = vecenv.make(GAMES[name], num_envs=3, seed=3)
    field = engine.spec.observation[0].name
    np.testing.assert_array_equal(engine.obs[field][0, 0], a)
    np.testing.assert_array_equal(engine.get_state(0), state)
    env.start(seed=2**70)  # numpy takes any non-negative int; so does the face


@pytest.mark.parametrize("name", NAMES)
def test_step_and_render_before_start_raise(name):
    env = csuite.load(name)
    with pytest.raises(RuntimeError, match=r"`start` must be called before calling `step`"):
        env.step(0)
    with pytest.raises(RuntimeError, match="start"):
        env.render()
    assert env.get_state() is None


@pytest.mark.parametrize("name", NAMES)
def test_invalid_actions_raise_value_error_and_change_nothing(name):
    env = csuite.load(name, {"seed": 0})
    env.start()
    n = env.action_spec().num_values
    before = env.get_state()
    for action in [n, -1, 0.5, "0", None, [0], np.array([0, 1]), 1j, float("nan"), 2**70]:
        with pytest.raises(ValueError, match="Invalid action"):
            env.step(action)
        np.testing.assert_array_equal(env.get_state(), before)
    # What csuite's ``action in [...]`` admits: any number equal to a valid index.
    for action in [np.int8(n - 1), np.uint64(0), np.array(n - 1), float(n - 1), np.float32(0)]:
        env.step(action)


@pytest.mark.parametrize("name", NAMES)
def test_bad_states_raise_value_error_and_change_nothing(name):
    env = csuite.load(name, {"seed": 0})
    env.start()
    env.step(0)
    before = env.get_state()
    other = csuite.load("catch", {"rows": 3})  # another record type than any default game's
    other.start()
    done = env.get_state()
    done.done = 1
    bad_step = env.get_state()
    bad_step.step = -1
    for bad in [
        None,
        {},
        (1, 2),
        "state",
        before.tolist(),
        other.get_state(),
        done,
        bad_step,
        np.stack([before, before]),
    ]:
        with pytest.raises(ValueError):
            env.set_state(bad)
        np.testing.assert_array_equal(env.get_state(), before)
    fresh = csuite.load(name)
    fresh.set_state(before)  # a state starts an environment
    assert fresh.started
    np.testing.assert_array_equal(fresh.step(1)[0], env.step(1)[0])


@pytest.mark.parametrize("name", NAMES)
def test_bad_settings(name):
    with pytest.raises(TypeError, match="unexpected setting 'nope'"):
        csuite.load(name, {"nope": 1})
    with pytest.raises(TypeError, match="settings must be a dict"):
        csuite.load(name, [("seed", 1)])
    with pytest.raises(ValueError, match="seed"):
        csuite.load(name, {"seed": -1})
    with pytest.raises(TypeError, match="seed"):
        csuite.load(name, {"seed": 1.5})
    spec = registry.get_spec(GAMES[name])
    for key, entry in spec.configuration.items():
        if entry.type in ("integer", "number"):
            with pytest.raises(ValueError, match=key):
                csuite.load(name, {key: "many"})


def test_unknown_names():
    with pytest.raises(ValueError, match="not a valid EnvName"):
        csuite.load("nope")
    with pytest.raises(ValueError):
        csuite.load("CartPole-v1")  # a game, but no csuite environment


# -- the dm_env adapter ------------------------------------------------------------------------


def _dm_env_test(name):
    class Test(test_utils.EnvironmentTestMixin, absltest.TestCase):
        def make_object_under_test(self):
            return csuite.DMEnvFromCSuite(csuite.load(name, {"seed": 1}))

    Test.__name__ = Test.__qualname__ = f"TestDMEnvFromCSuite_{name}"
    return Test


for _name in NAMES:
    globals()[f"TestDMEnvFromCSuite_{_name}"] = _dm_env_test(_name)


@pytest.mark.parametrize("name", NAMES)
def test_dm_env_adapter_first_then_mid_forever(name):
    env = csuite.dm_env_wrapper.DMEnvFromCSuite(csuite.load(name, {"seed": 2}))
    assert isinstance(env, dm_env.Environment)
    first = env.step(0)  # a fresh environment resets and ignores the action
    assert first.step_type is dm_env.StepType.FIRST
    assert first.reward is None and first.discount is None
    direct = csuite.load(name, {"seed": 2})
    np.testing.assert_array_equal(first.observation, direct.start())
    rng = np.random.default_rng(0)
    for action in random_actions(direct, rng, 300):
        ts = env.step(action)
        obs, reward = direct.step(action)
        assert ts.step_type is dm_env.StepType.MID
        assert ts.discount == 1.0 and ts.reward == reward
        np.testing.assert_array_equal(ts.observation, obs)
        env.observation_spec().validate(ts.observation)
    state = env.get_state()
    a = env.step(0)
    env.set_state(state)
    b = env.step(0)
    np.testing.assert_array_equal(a.observation, b.observation)
    assert_image(env.render())
    assert env.reset().step_type is dm_env.StepType.FIRST
