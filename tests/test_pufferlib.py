"""PufferLib's native PufferEnv over the engine, run by PufferLib itself: its Serial and
Multiprocessing backends, its buffers written in place, its trainer."""

import warnings

import numba
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from tests.envs.reference import need

with warnings.catch_warnings():  # PufferLib imports the unmaintained gym package
    warnings.simplefilter("ignore")
    need("pufferlib.vector", "pufferlib 3.0 (see docs/faces/pufferlib.md)")
    import pufferlib  # noqa: E402
    import pufferlib.vector  # noqa: E402

from vecenv.gym.multiagent import MultiAgentVectorEnv, flat  # noqa: E402
from vecenv.gym.vector import GameVectorEnv  # noqa: E402
from vecenv.pufferlib import PufferEnv, env_creator  # noqa: E402

SEED = 42


def make(game, backend, envs, per_env, **kwargs):
    backend = getattr(pufferlib.vector, backend)
    if backend is pufferlib.vector.Multiprocessing:
        kwargs.setdefault("num_workers", envs)
        kwargs["overwork"] = True  # more workers than this machine's cores: fine for a test
    return pufferlib.vector.make(
        env_creator(game, num_envs=per_env), backend=backend, num_envs=envs, **kwargs
    )


def random_actions(rng, vec, steps):
    n = vec.num_agents
    return rng.integers(0, vec.single_action_space.n, (steps, n)).astype(np.int32)


def trajectory(vec, actions):
    obs, _ = vec.reset(SEED)
    out = [obs.copy()]
    for a in actions:
        obs, rewards, terminals, truncations, _ = vec.step(a)
        out += [obs.copy(), rewards.copy(), terminals.copy(), truncations.copy()]
    return out


# -- one agent -----------------------------------------------------------------------------------


def test_cartpole_spaces_and_buffers_as_pufferlib_sets_them():
    env = PufferEnv("cartpole", num_envs=3)
    assert env.num_agents == 3
    assert env.single_observation_space.shape == (4,)
    assert env.single_observation_space.dtype == np.float32
    assert env.single_action_space.n == 2
    assert env.observations.shape == (3, 4) and env.observations.dtype == np.float32
    assert env.rewards.dtype == np.float32
    assert env.terminals.dtype == env.truncations.dtype == env.masks.dtype == np.bool_
    assert env.actions.dtype == np.int32
    # No copy: the rules write PufferLib's observation rows.
    assert np.shares_memory(env.engine._obs[0], env.observations)


@pytest.mark.parametrize("backend", ["Serial", "Multiprocessing"])
def test_cartpole_steps_as_the_gymnasium_vector_env_seeded_alike(backend):
    envs, per_env = 2, 3
    vec = make("cartpole", backend, envs, per_env)
    try:
        actions = random_actions(np.random.default_rng(0), vec, 120)
        ours = trajectory(vec, actions)
    finally:
        vec.close()
    # Each PufferLib env k (seed 42 + k) against a same-step vector env seeded alike.
    for k in range(envs):
        gym = GameVectorEnv(
            "cartpole",
            num_envs=per_env,
            autoreset_mode=AutoresetMode.SAME_STEP,
            max_episode_steps=500,
        )
        rows = slice(k * per_env, (k + 1) * per_env)
        obs, _ = gym.reset(seed=SEED + k)
        np.testing.assert_array_equal(ours[0][rows], obs)
        ended = 0
        for t, a in enumerate(actions):
            obs, rewards, term, trunc, _ = gym.step(a[rows].astype(np.int64))
            o, r, d, tr = ours[1 + 4 * t : 5 + 4 * t]
            np.testing.assert_array_equal(o[rows], obs)
            np.testing.assert_array_equal(r[rows], rewards.astype(np.float32))
            np.testing.assert_array_equal(d[rows], term)
            np.testing.assert_array_equal(tr[rows], trunc)
            ended += term.sum()
        assert ended > 0  # episodes ended and restarted inside the step


def test_serial_buffers_are_written_in_place():
    vec = make("cartpole", "Serial", 2, 4)
    obs, _ = vec.reset(SEED)
    assert obs is vec.observations
    for k, env in enumerate(vec.envs):
        rows = slice(4 * k, 4 * (k + 1))
        for name in ("observations", "rewards", "terminals", "truncations", "masks"):
            mine, theirs = getattr(env, name), getattr(vec, name)
            assert np.shares_memory(mine, theirs[rows]), name
    before = vec.observations.copy()
    obs, rewards, terminals, truncations, _ = vec.step(np.zeros(8, dtype=np.int32))
    assert obs is vec.observations and rewards is vec.rewards and terminals is vec.terminals
    assert not np.array_equal(before, obs)
    assert (rewards == 1.0).all()


def test_multiprocessing_writes_into_shared_memory():
    vec = make("cartpole", "Multiprocessing", 2, 4)
    try:
        obs, _ = vec.reset(SEED)
        shared = np.frombuffer(vec.shm["observations"], dtype=np.float32)
        assert np.shares_memory(obs, shared)
        first = obs.copy()
        obs, rewards, _, _, _ = vec.step(np.ones(8, dtype=np.int32))
        assert np.shares_memory(obs, shared)
        assert np.shares_memory(rewards, np.frombuffer(vec.shm["rewards"], dtype=np.float32))
        assert not np.array_equal(first, obs)
        # The workers' engines stepped; the main process only reads the shared rows.
        local = PufferEnv("cartpole", num_envs=4, seed=SEED)
        local.reset(SEED)
        local.step(np.ones(4, dtype=np.int32))
        np.testing.assert_array_equal(obs[:4], local.observations)
    finally:
        vec.close()


@pytest.mark.parametrize(
    ("backend", "kwargs"),
    [("Multiprocessing", {"num_workers": 1}), ("Multiprocessing", {"num_workers": 2})],
)
def test_same_trajectories_for_any_backend_and_worker_count(backend, kwargs):
    actions = random_actions(np.random.default_rng(1), make("cartpole", "Serial", 2, 3), 80)
    reference = trajectory(make("cartpole", "Serial", 2, 3), actions)
    vec = make("cartpole", backend, 2, 3, **kwargs)
    try:
        ours = trajectory(vec, actions)
    finally:
        vec.close()
    for x, y in zip(ours, reference, strict=True):
        np.testing.assert_array_equal(x, y)


def test_same_trajectories_on_two_threads():
    """The threaded loop (N >= 1024, num_threads=2) writes PufferLib's buffers as the serial one."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here")
    one = PufferEnv("cartpole", num_envs=1024, seed=8)
    two = PufferEnv("cartpole", num_envs=1024, seed=8, num_threads=2)
    assert two.engine.threads.possible and not one.engine.threads.possible
    acts = random_actions(np.random.default_rng(8), one, 40)
    for x, y in zip(trajectory(two, acts), trajectory(one, acts), strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(two._ended, one._ended)
    np.testing.assert_array_equal(two._running, one._running)


def test_seeds_are_deterministic_and_reset_restarts_them():
    a, b = PufferEnv("cartpole", num_envs=5), PufferEnv("cartpole", num_envs=5, seed=9)
    acts = random_actions(np.random.default_rng(2), a, 60)
    first = trajectory(a, acts)
    for x, y in zip(trajectory(b, acts), first, strict=True):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(trajectory(a, acts), first, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.array([0, 1, 2, 0], dtype=np.int32), "row 2 is out of range"),
        (np.array([0, 1, -1, 0], dtype=np.int64), "row 2 is out of range"),
        (np.array([0, 1, 2**40, 0], dtype=np.int64), "out of range"),  # no wrap to int32
        (np.array([0.0, 1.0, 1.0, 0.0]), "must be integers"),
        (np.zeros(3, dtype=np.int32), "must have shape"),
        (np.zeros((4, 1), dtype=np.int32), "must have shape"),
    ],
)
def test_bad_actions_raise_before_any_episode_moves(actions, message):
    env = PufferEnv("cartpole", num_envs=4, seed=3)
    env.reset(3)
    env.step(np.ones(4, dtype=np.int32))
    state, obs = env.engine.get_state(), env.observations.copy()
    with pytest.raises(ValueError, match=message):
        env.step(actions)
    np.testing.assert_array_equal(env.engine.get_state(), state)
    np.testing.assert_array_equal(env.observations, obs)
    env.step(np.ones(4, dtype=np.int32))  # and it goes on


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.int16])
def test_actions_of_other_integer_types_step_alike(dtype):
    a, b = PufferEnv("cartpole", num_envs=4, seed=4), PufferEnv("cartpole", num_envs=4, seed=4)
    a.reset(4), b.reset(4)
    rng = np.random.default_rng(4)
    for _ in range(20):
        acts = rng.integers(0, 2, 4)
        a.step(acts.astype(np.int32))
        b.step(acts.astype(dtype))
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.rewards, b.rewards)


def test_continuous_actions_as_the_gymnasium_vector_env():
    env = PufferEnv("pendulum", num_envs=3, seed=5)
    assert env.actions.dtype == np.float32 and env.actions.shape == (3, 1)
    gym = GameVectorEnv(
        "pendulum", num_envs=3, autoreset_mode=AutoresetMode.SAME_STEP, max_episode_steps=200
    )
    obs, _ = env.reset(5)
    np.testing.assert_array_equal(obs, gym.reset(seed=5)[0])
    rng = np.random.default_rng(5)
    for _ in range(30):
        a = rng.uniform(-2, 2, (3, 1)).astype(np.float32)
        o, r, *_ = env.step(a)
        go, gr, *_ = gym.step(a)
        np.testing.assert_array_equal(o, go)
        np.testing.assert_array_equal(r, gr.astype(np.float32))
    with pytest.raises(ValueError, match="not a finite float32"):
        env.step(np.array([[0.0], [np.nan], [0.0]], dtype=np.float32))


def test_infos_report_episode_returns():
    env = PufferEnv("cartpole", num_envs=8, seed=6, report_interval=50)
    env.reset(6)
    infos = []
    for _ in range(100):
        *_, info = env.step(np.zeros(8, dtype=np.int32))
        infos += info
    assert len(infos) == 2
    # Pushing left always: episodes of about ten steps, reward 1 per step.
    assert 5 < infos[0]["episode_return"] < 30
    assert infos[0]["episode_return"] == infos[0]["episode_length"]
    assert infos[0]["n"] >= 8


def test_actions_of_any_layout_and_bad_steps_keep_the_reports_in_step():
    """Actions not laid out as PufferLib's buffer (a strided view, a list, a column) step as
    its own do, and a refused step counts for nothing in the steps between reports."""
    a = PufferEnv("cartpole", num_envs=4, seed=7, report_interval=5)
    b = PufferEnv("cartpole", num_envs=4, seed=7, report_interval=5)
    a.reset(7), b.reset(7)
    rng = np.random.default_rng(7)
    reports = 0
    for t in range(60):
        acts = rng.integers(0, 2, 8).astype(np.int32)
        kind = t % 3
        other = acts[::2] if kind == 0 else acts[:4].tolist() if kind == 1 else acts[:4]
        first = a.step(np.ascontiguousarray(acts[::2]) if kind == 0 else acts[:4].copy())
        if t % 7 == 0:
            with pytest.raises(ValueError, match="out of range"):
                b.step(np.full(4, 2, dtype=np.int32))
            with pytest.raises(ValueError, match="must have shape"):
                b.step(np.zeros(8, dtype=np.int32)[::2][:3])
        second = b.step(other)
        for x, y in zip(first[:4], second[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        assert first[4] == second[4]
        assert first[4] == [] or t % 5 == 4
        reports += len(first[4])
    assert reports > 0


# -- two agents ----------------------------------------------------------------------------------


def test_connectx_layout_one_row_per_agent():
    env = PufferEnv("connectx", num_envs=2, seed=7)
    assert env.num_agents == 4
    # As PufferLib's emulation flattens the Gymnasium Dict: fields in the Dict's order, bytes.
    space = env.single_observation_space
    assert space.dtype == np.uint8 and space.shape == (50,)
    assert list(env.obs_dtype.names) == ["board", "legal", "mark"]
    assert env.obs_fields["board"][0] == 0 and env.obs_fields["legal"][0] == 42
    obs, _ = env.reset(7)
    fields = obs.view(env.obs_dtype)[:, 0]
    np.testing.assert_array_equal(fields["mark"], [1, 2, 1, 2])
    np.testing.assert_array_equal(env.masks, [True, False, True, False])
    assert fields["legal"].all() and (fields["board"] == 0).all()


def connectx_actions(rng, vec, obs_dtype, steps):
    """Random legal moves for the agents to move, anything in range for the others."""
    del steps

    def pick(obs, masks):
        legal = obs.view(obs_dtype)[:, 0]["legal"]
        out = rng.integers(0, 7, len(masks)).astype(np.int32)
        for row in np.flatnonzero(masks):
            out[row] = rng.choice(np.flatnonzero(legal[row]))
        return out

    return pick


@pytest.mark.parametrize("backend", ["Serial", "Multiprocessing"])
def test_connectx_plays_as_the_multi_agent_vector_env(backend):
    envs, per_env = 2, 3
    vec = make("connectx", backend, envs, per_env)
    driver = PufferEnv("connectx", num_envs=per_env)
    pick = connectx_actions(np.random.default_rng(8), vec, driver.obs_dtype, 0)
    ref = [
        MultiAgentVectorEnv("connectx", num_envs=per_env, autoreset_mode=AutoresetMode.SAME_STEP)
        for _ in range(envs)
    ]
    try:
        obs, _ = vec.reset(SEED)
        masks = vec.masks.copy() if backend == "Serial" else vec.buf["masks"].ravel().copy()
        theirs = [r.reset(seed=SEED + k) for k, r in enumerate(ref)]
        ended = 0
        for _ in range(60):
            rows = obs.view(driver.obs_dtype)[:, 0]
            for k, (t_obs, t_info) in enumerate(theirs):
                part = slice(6 * k, 6 * (k + 1))
                np.testing.assert_array_equal(rows["board"][part], flat(t_obs["board"]))
                np.testing.assert_array_equal(rows["mark"][part], flat(t_obs["mark"]))
                np.testing.assert_array_equal(masks[part], flat(t_info["to_play"]))
                np.testing.assert_array_equal(
                    rows["legal"][part] & masks[part, None], flat(t_info["action_mask"])
                )
            actions = pick(obs, masks)
            obs, rewards, terminals, truncations, _ = vec.step(actions)
            masks = vec.masks.copy() if backend == "Serial" else vec.buf["masks"].ravel().copy()
            theirs = []
            for k, r in enumerate(ref):
                part = slice(6 * k, 6 * (k + 1))
                t_obs, t_rew, t_term, t_trunc, t_info = r.step(
                    actions[part].reshape(per_env, 2).astype(np.int64)
                )
                np.testing.assert_array_equal(rewards[part], flat(t_rew).astype(np.float32))
                np.testing.assert_array_equal(terminals[part], flat(t_term))
                np.testing.assert_array_equal(truncations[part], flat(t_trunc))
                ended += t_term.sum()
                theirs.append((t_obs, t_info))
        assert ended > 0
    finally:
        vec.close()


def test_connectx_bad_move_raises_before_any_match_moves():
    env = PufferEnv("connectx", num_envs=2, seed=9)
    env.reset(9)
    obs = env.observations.copy()
    with pytest.raises(ValueError, match="row 1 is out of range"):
        env.step(np.array([3, 0, 9, 0], dtype=np.int32))  # match 1's first agent: 9
    np.testing.assert_array_equal(env.observations, obs)


# -- PufferLib's trainer -------------------------------------------------------------------------


def test_pufferlib_trainer_runs_on_vecenv_cartpole(tmp_path):
    torch = need("torch", "torch (PufferLib's trainer)")
    import pufferlib.models
    import pufferlib.pufferl

    torch.manual_seed(0)
    vec = pufferlib.vector.make(
        env_creator("cartpole", num_envs=64, report_interval=16), backend=pufferlib.PufferEnv
    )
    policy = pufferlib.models.Default(vec, hidden_size=32)
    config = dict(
        seed=0,
        torch_deterministic=True,
        cpu_offload=False,
        device="cpu",
        optimizer="adam",
        anneal_lr=False,
        precision="float32",
        total_timesteps=64 * 32 * 12,
        learning_rate=0.01,
        gamma=0.98,
        gae_lambda=0.9,
        update_epochs=2,
        clip_coef=0.2,
        vf_coef=2.0,
        vf_clip_coef=0.2,
        max_grad_norm=1.5,
        ent_coef=0.001,
        adam_beta1=0.9,
        adam_beta2=0.999,
        adam_eps=1e-8,
        data_dir=str(tmp_path),
        checkpoint_interval=10**6,
        batch_size=64 * 32,
        bptt_horizon=32,
        minibatch_size=512,
        max_minibatch_size=512,
        compile=False,
        compile_mode=None,
        compile_fullgraph=False,
        vtrace_rho_clip=1.0,
        vtrace_c_clip=1.0,
        prio_alpha=0.0,
        prio_beta0=1.0,
        use_rnn=False,
        env="vecenv",
    )
    trainer = pufferlib.pufferl.PuffeRL(config, vec, policy)
    returns, losses = [], []
    try:
        while trainer.global_step < config["total_timesteps"]:
            stats = trainer.evaluate()
            if stats.get("episode_return"):
                returns.append(float(np.mean(stats["episode_return"])))
            trainer.stats.clear()
            trainer.train()
            losses.append(dict(trainer.losses))
    finally:
        trainer.utilization.stop()
    assert trainer.global_step >= config["total_timesteps"]
    assert returns and np.isfinite(returns).all()
    assert losses and all(np.isfinite(v) for d in losses for v in d.values())
    # It learns: a random CartPole policy lasts about 22 steps.
    assert max(returns[-3:]) > returns[0]


def test_importing_the_face_prints_nothing(tmp_path):
    """No notice of the old gym (which PufferLib imports) on the face's import; nothing left in
    the working folder either."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import vecenv.pufferlib"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""
    assert list(tmp_path.iterdir()) == []


def test_the_resources_link_removed_by_another_process_is_no_error(tmp_path, monkeypatch):
    """Two processes importing the face in one folder (a suite's workers) both find PufferLib's
    ``resources`` link; the second to unlink it finds it gone, which must not fail its import."""
    import os

    import vecenv.pufferlib as face

    monkeypatch.chdir(tmp_path)
    os.symlink(os.path.join(pufferlib.__path__[0], "resources"), "resources")
    unlink = os.unlink

    def removed_first(path):  # the other process unlinks between this one's check and unlink
        unlink(path)
        raise FileNotFoundError(2, "No such file or directory", path)

    monkeypatch.setattr(os, "unlink", removed_first)
    face._remove_resources_link()
    assert not os.path.lexists("resources")
