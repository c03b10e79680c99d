"""The engine's array API on every game: reset, step, time limits, autoreset, state I/O."""

import numpy as np
import pytest

import vecenv
from vecenv import registry


def random_actions(engine, rng, n=None):
    spec = engine.spec.action
    n = engine.num_envs if n is None else n
    agents = engine.num_agents
    head = (n,) if agents == 1 else (n, agents)
    if spec.discrete:
        return rng.integers(spec.low[0], spec.high[0] + 1, size=head, dtype=np.int64)
    low, high = spec.low.reshape(spec.shape), spec.high.reshape(spec.shape)
    return rng.uniform(low, high, size=head + spec.shape)


GAMES = registry.list_envs()


def test_discovery_lists_every_game_folder():
    assert "cartpole" in GAMES
    for name in GAMES:
        assert registry.get_spec(name).name == name


@pytest.mark.parametrize("name", ["cartpole", "CartPole-v1", "vecenv/CartPole-v1", "CARTPOLE"])
def test_make_accepts_names_and_gym_ids(name):
    assert vecenv.make(name).name == "cartpole"


def test_unknown_game_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown game 'nope'"):
        vecenv.make("nope")


@pytest.mark.parametrize("game", GAMES)
def test_shapes_and_dtypes(game):
    e = vecenv.make(game, num_envs=5, seed=0)
    spec = e.spec
    agents = spec.num_agents
    for field in spec.observation:
        head = (5,) if field.shared else (5, agents)
        assert e.obs[field.name].shape == head + field.shape
        assert e.obs[field.name].dtype == field.dtype
    obs, rewards, terminated, truncated = e.step(random_actions(e, np.random.default_rng(0)))
    assert rewards.shape == (5, agents) and rewards.dtype == np.float64
    assert terminated.shape == truncated.shape == (5,)
    assert terminated.dtype == truncated.dtype == np.bool_
    assert (e.states["step"] == 1).all()


@pytest.mark.parametrize("game", GAMES)
def test_time_limit_truncates_at_episode_steps(game):
    e = vecenv.make(game, num_envs=3, seed=1, autoreset="disabled", max_episode_steps=7)
    rng = np.random.default_rng(1)
    for k in range(1, 8):
        was_running = e.states["done"] == 0
        _, _, terminated, truncated = e.step(random_actions(e, rng))
        running = was_running & ~terminated
        assert (truncated[running] == (k == 7)).all()
    assert (e.states["done"] != 0).all()


def test_max_episode_steps_overrides_and_zero_means_no_limit():
    e = vecenv.make("cartpole", num_envs=1, seed=0)
    assert e.max_episode_steps == 500
    from vecenv.engine import Engine

    assert Engine("cartpole", max_episode_steps=0).max_episode_steps is None
    assert Engine("cartpole", max_episode_steps=9).max_episode_steps == 9
    for bad in (True, -1, 2.5):
        with pytest.raises(ValueError, match="max_episode_steps must be"):
            Engine("cartpole", max_episode_steps=bad)


def test_next_step_autoreset_ignores_the_action_and_restarts():
    e = vecenv.make("cartpole", num_envs=1, seed=3, episodeSteps=4)
    for _ in range(4):
        e.step(np.zeros(1, dtype=np.int64))
    assert e.truncated[0] and e.states["done"][0] == 2
    obs, rewards, terminated, truncated = e.step(np.array([7 % 2]))
    assert rewards[0, 0] == 0.0 and not terminated[0] and not truncated[0]
    assert e.states["step"][0] == 0 and e.states["done"][0] == 0
    assert np.all(np.abs(obs["obs"][0, 0]) <= 0.05)


def test_same_step_autoreset_keeps_the_final_observation():
    e = vecenv.make("cartpole", num_envs=2, seed=3, autoreset="same_step", episodeSteps=4)
    before = None
    for _ in range(4):
        before = e.get_state()
        e.step(np.array([1, 0]))
    assert e.truncated.all()
    assert (e.states["step"] == 0).all()
    # The final observation is the state the fourth step reached, not the reset one.
    probe = vecenv.make("cartpole", num_envs=2, seed=0, autoreset="disabled", episodeSteps=4)
    probe.set_state(before)
    probe.step(np.array([1, 0]))
    np.testing.assert_array_equal(e.final_obs["obs"], probe.obs["obs"])
    assert not np.array_equal(e.obs["obs"], e.final_obs["obs"])


def test_disabled_autoreset_freezes_until_a_masked_reset():
    e = vecenv.make("cartpole", num_envs=2, seed=3, autoreset="disabled", episodeSteps=3)
    for _ in range(3):
        e.step(np.array([1, 1]))
    frozen = e.get_state()
    obs = e.obs["obs"].copy()
    _, rewards, terminated, truncated = e.step(np.array([0, 0]))
    assert (rewards == 0).all() and truncated.all() and not terminated.any()
    np.testing.assert_array_equal(e.get_state(), frozen)
    np.testing.assert_array_equal(e.obs["obs"], obs)
    e.reset(mask=np.array([True, False]))
    assert e.states["step"][0] == 0 and e.states["done"][0] == 0
    assert e.states["done"][1] == 2


def test_reset_with_the_same_seed_repeats_and_without_seed_continues():
    e = vecenv.make("cartpole", num_envs=4, seed=11)
    first = e.get_state()
    e.reset(seed=11)
    np.testing.assert_array_equal(e.get_state(), first)
    e.reset()
    assert not np.array_equal(e.get_state()["x"], first["x"])


def test_seed_list_gives_each_episode_a_single_env_stream():
    single = vecenv.make("cartpole", num_envs=1, seed=42)
    e = vecenv.make("cartpole", num_envs=3, seed=0)
    e.reset(seed=[5, 42, 42])
    assert e.states["x"][1] == single.states["x"][0] == e.states["x"][2]
    assert e.states["x"][0] != e.states["x"][1]


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "3", True])
def test_bad_seeds_raise(seed):
    with pytest.raises(ValueError, match="seed"):
        vecenv.make("cartpole", seed=seed)


def test_large_seeds_work():
    e = vecenv.make("cartpole", num_envs=2, seed=2**64 - 1)
    assert e.seed == 2**64 - 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"episodeSteps": 0}, r"'episodeSteps' must be an integer in \[1, inf\]"),
        ({"episodeSteps": 2.5}, "'episodeSteps' must be an integer"),
        ({"sutton_barto_reward": 1}, "'sutton_barto_reward' must be a boolean"),
        ({"gravity": 3}, "cartpole has no configuration 'gravity'"),
        ({"num_envs": 0}, "num_envs must be a positive integer"),
        ({"num_threads": 0}, "num_threads must be an integer"),
        ({"num_threads": 999}, "num_threads must be an integer"),
        ({"autoreset": "sometimes"}, "autoreset must be one of"),
    ],
)
def test_bad_configuration_names_the_key(kwargs, match):
    with pytest.raises(ValueError, match=match):
        vecenv.make("cartpole", **kwargs)


def test_configuration_reaches_the_rules():
    e = vecenv.make("cartpole", num_envs=2, seed=0, sutton_barto_reward=True)
    _, rewards, _, _ = e.step(np.array([0, 1]))
    assert (rewards == 0.0).all()
    assert e.config == {"episodeSteps": 500, "sutton_barto_reward": True}


@pytest.mark.parametrize(
    "actions, match",
    [
        (np.array([0, 1, 2, 0]), r"action of env 2 is out of range \[0, 1\]"),
        (np.array([-1, 0, 0, 0]), "action of env 0 is out of range"),
        (np.array([0.0, 1.0, 0.0, 1.0]), "actions must be integers"),
        (np.array([0, 1, 0]), r"must have shape \(4, 1\) or \(4,\)"),
        (np.array([[0, 1], [0, 1]]), "must have shape"),
        (np.array(["a", "b", "c", "d"]), "actions must be integers"),
        (np.array([0, 2**63, 0, 0], dtype=np.uint64), "too large"),
    ],
)
def test_bad_actions_raise_before_any_episode_moves(actions, match):
    e = vecenv.make("cartpole", num_envs=4, seed=0)
    e.step(np.array([0, 1, 0, 1]))
    before = e.get_state()
    obs = e.obs["obs"].copy()
    with pytest.raises(ValueError, match=match):
        e.step(actions)
    np.testing.assert_array_equal(e.get_state(), before)
    np.testing.assert_array_equal(e.obs["obs"], obs)


def test_actions_of_any_integer_dtype_and_agent_axis_are_accepted():
    e = vecenv.make("cartpole", num_envs=3, seed=0)
    ref = vecenv.make("cartpole", num_envs=3, seed=0)
    e.step(np.array([[1], [0], [1]], dtype=np.int8))
    ref.step([1, 0, 1])
    np.testing.assert_array_equal(e.get_state(), ref.get_state())


def test_get_state_is_a_copy_and_set_state_round_trips():
    e = vecenv.make("cartpole", num_envs=3, seed=0)
    saved = e.get_state()
    saved["x"][:] = 99.0
    assert (e.states["x"] != 99.0).all()
    snapshot = e.get_state()
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, 2, 3) for _ in range(50)]
    for a in acts:
        e.step(a)
    after = e.get_state()
    e.set_state(snapshot)
    for a in acts:
        e.step(a)
    np.testing.assert_array_equal(e.get_state(), after)


def test_set_state_of_one_episode_and_observation_follows():
    e = vecenv.make("cartpole", num_envs=3, seed=0)
    one = e.get_state(1)
    assert one.shape == ()
    one["x"] = 1.25
    e.set_state(one, 1)
    assert e.obs["obs"][1, 0, 0] == np.float32(1.25)
    assert e.states["x"][0] != 1.25


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda s: s.__setitem__("x", np.nan), "'x' must be finite"),
        (lambda s: s.__setitem__("theta_dot", np.inf), "'theta_dot' must be finite"),
        (lambda s: s.__setitem__("step", -1), "'step' must be >= 0"),
        (lambda s: s.__setitem__("done", 9), "'done' must be in"),
    ],
)
def test_set_state_rejects_garbled_records_and_changes_nothing(mutate, match):
    e = vecenv.make("cartpole", num_envs=2, seed=0)
    before = e.get_state()
    bad = e.get_state()
    mutate(bad[1:])
    with pytest.raises(ValueError, match=match):
        e.set_state(bad)
    np.testing.assert_array_equal(e.get_state(), before)


def test_set_state_rejects_wrong_dtype_and_shape():
    e = vecenv.make("cartpole", num_envs=2, seed=0)
    with pytest.raises(ValueError, match="dtype"):
        e.set_state(np.zeros(2))
    with pytest.raises(ValueError, match="shape"):
        e.set_state(e.get_state()[:1])
    other = vecenv.make("mountaincar" if "mountaincar" in GAMES else "cartpole", num_envs=2)
    if other.name != "cartpole":
        with pytest.raises(ValueError, match="dtype"):
            e.set_state(other.get_state())


def test_mask_must_be_a_bool_array_of_n():
    e = vecenv.make("cartpole", num_envs=2)
    with pytest.raises(ValueError, match="mask"):
        e.reset(mask=np.array([1, 0]))
    with pytest.raises(ValueError, match="mask"):
        e.reset(mask=np.array([True]))


@pytest.mark.parametrize("game", GAMES)
def test_render_rgb_array(game):
    e = vecenv.make(game, num_envs=2, seed=0)
    frame = e.render(1)
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    with pytest.raises(ValueError, match="no 'video' renderer"):
        e.render(0, "video")


def test_odd_action_arrays_are_normalised_and_give_the_same_steps():
    """Read-only, strided or narrow actions are copied into the kernels' one array type."""
    ref = vecenv.make("cartpole", num_envs=4, seed=2)
    e = vecenv.make("cartpole", num_envs=4, seed=2)
    base = np.array([1, 0, 1, 1])
    readonly = base.copy()
    readonly.setflags(write=False)
    strided = np.repeat(base, 2)[::2]
    for actions in (readonly, strided, base.astype(np.uint8), [1, 0, 1, 1]):
        ref.step(base)
        e.step(actions)
        np.testing.assert_array_equal(e.get_state(), ref.get_state())
    # One compiled step for every kind of input: nothing recompiled for the odd ones (the
    # serial step by address; a face that passes its own buffers has steps of its own).
    assert len(e._drivers.step_own.overloads) == 1


def test_threads_are_chosen_by_timing_both_loops_and_never_change_the_episodes(monkeypatch):
    from vecenv import engine as E
    from vecenv import threads

    small = vecenv.make("cartpole", num_envs=8, num_threads=2)
    assert small.uses_threads is False  # below PARALLEL_MIN_ENVS: never threaded
    n = E.PARALLEL_MIN_ENVS
    # Any step feeds both threads: the engine times the two loops alternately, then keeps one.
    monkeypatch.setattr(threads, "MIN_SECONDS_PER_THREAD", 0.0)
    auto = vecenv.make("cartpole", num_envs=n, num_threads=2, seed=1)
    assert auto.uses_threads is None  # decided after the first steps are timed
    forced = vecenv.make("cartpole", num_envs=n, num_threads=2, seed=1, parallel=True)
    serial = vecenv.make("cartpole", num_envs=n, num_threads=2, seed=1, parallel=False)
    rng = np.random.default_rng(0)
    loops = set()
    for _ in range(1 + 2 * (threads.PROBES + 1) + 2):
        actions = rng.integers(0, 2, n)
        for e in (auto, forced, serial):
            e.step(actions)
        loops.add(auto.threads.chosen)
        np.testing.assert_array_equal(auto.get_state(), forced.get_state())
        np.testing.assert_array_equal(auto.get_state(), serial.get_state())
    assert auto.uses_threads in (True, False) and not auto.threads.deciding
    assert forced.uses_threads is True and serial.uses_threads is False
    assert serial._direct is not None and auto._direct is None  # only a fixed loop skips the policy
    with pytest.raises(ValueError, match="parallel must be"):
        vecenv.make("cartpole", parallel="yes")


@pytest.mark.parametrize("game", GAMES)
def test_incremental_observations_equal_full_ones(game):
    """Games may update only what a step changed (``observe_step``): after many steps, with
    autoresets, the observation equals the one written from scratch for the same states."""
    e = vecenv.make(game, num_envs=16, seed=3)
    rng = np.random.default_rng(3)
    fresh = vecenv.make(game, num_envs=16, seed=3)
    for _ in range(60):
        e.step(random_actions(e, rng))
        fresh.set_state(e.get_state())
        for name in e.obs:
            np.testing.assert_array_equal(e.obs[name], fresh.obs[name], err_msg=name)


def test_public_observation_arrays_are_read_only():
    e = vecenv.make("connectx", num_envs=2, seed=0)
    obs = e.reset()
    with pytest.raises(ValueError, match="read-only"):
        obs["board"][0, 0] = 1
    _, _, _, _ = e.step(np.zeros((2, 2), dtype=np.int64))
    assert not e.obs["board"].flags.writeable


def test_observe_into_a_callers_buffers():
    """``observe_into``: the kernels write the caller's arrays, with the same trajectory."""
    e, ref = (
        vecenv.make("cartpole", num_envs=4, seed=5),
        vecenv.make("cartpole", num_envs=4, seed=5),
    )
    mine = np.zeros((4, 1, 4), dtype=np.float32)
    e.observe_into((mine,))
    e.reset(seed=5)
    ref.reset(seed=5)
    for _ in range(30):
        e.step(np.ones(4, dtype=np.int64))
        ref.step(np.ones(4, dtype=np.int64))
        np.testing.assert_array_equal(mine, ref.obs["obs"])
    assert np.shares_memory(e.obs["obs"], mine)
    for bad in ((np.zeros((4, 1, 4)),), (np.zeros((4, 4), dtype=np.float32),), ()):
        with pytest.raises(ValueError):
            e.observe_into(bad)
