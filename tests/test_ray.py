"""vecenv on a real local Ray cluster of several nodes: the distributed VectorEnv against the
local engine, a worker killed mid-run, pickling, and distributed self-play."""

import os
import pickle
import signal
import time

import cloudpickle
import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import vecenv.ray as vray
from vecenv.gym.vector import GameVectorEnv

from .arena.postgres import postgres_url  # noqa: F401  (a fixture)
from .raycluster import ray_cluster  # noqa: F401  (the module's cluster)

pytestmark = pytest.mark.usefixtures("ray_cluster")


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) and a.dtype == object:
        return a.shape == b.shape and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def same_step(out, ref):
    """Two ``step`` results agree: arrays bit for bit, and the same-step infos."""
    assert all(same(x, y) for x, y in zip(out[:4], ref[:4], strict=True))
    for key in ("_final_obs", "final_obs"):
        assert same(out[4].get(key, np.zeros(0)), ref[4].get(key, np.zeros(0)))


def actions(env, rng):
    space = env.single_action_space
    if isinstance(space, gymnasium.spaces.Box):  # float64: each side casts to the kernels' type
        return rng.uniform(space.low, space.high, size=(env.num_envs,) + space.shape)
    return rng.integers(space.start, space.start + space.n, size=env.num_envs)


@pytest.mark.parametrize(
    "game,workers,mode,transport",
    [
        ("cartpole", 3, AutoresetMode.NEXT_STEP, "ray"),
        ("cartpole", 2, AutoresetMode.SAME_STEP, "ray"),
        ("catch", 1, AutoresetMode.DISABLED, "ray"),
        ("connectx", 2, AutoresetMode.SAME_STEP, "ray"),  # against its opponent: Dict obs
        ("cartpole", 3, AutoresetMode.NEXT_STEP, "shared"),
        ("catch", 2, AutoresetMode.DISABLED, "shared"),
        ("connectx", 2, AutoresetMode.SAME_STEP, "shared"),
        ("pendulum", 2, AutoresetMode.NEXT_STEP, "shared"),  # continuous actions
    ],
)
def test_same_trajectories_as_the_local_engine(game, workers, mode, transport):
    n = 7
    remote = vray.VectorEnv(
        game, num_envs=n, num_workers=workers, seed=5, autoreset_mode=mode, transport=transport
    )
    local = GameVectorEnv(game, num_envs=n, seed=5, autoreset_mode=mode)
    try:
        assert remote.single_observation_space == local.single_observation_space
        assert remote.action_space == local.action_space
        assert remote.metadata["autoreset_mode"] == mode
        assert same(remote.reset(seed=5)[0], local.reset(seed=5)[0])
        rng = np.random.default_rng(0)
        for k in range(40):
            a = actions(local, rng)
            same_step(remote.step(a), local.step(a))
            if mode == AutoresetMode.DISABLED and k % 10 == 9:
                mask = local.engine.states["done"] != 0
                opts = {"reset_mask": mask}
                assert same(remote.reset(options=opts)[0], local.reset(options=opts)[0])
        assert same(remote.get_state(), local.get_state())
        # A reseed with one seed per episode, and a partial reset.
        seeds = list(range(100, 100 + n))
        assert same(remote.reset(seed=seeds)[0], local.reset(seed=seeds)[0])
        mask = np.arange(n) % 3 == 0
        opts = {"reset_mask": mask}
        assert same(remote.reset(seed=9, options=opts)[0], local.reset(seed=9, options=opts)[0])
        a = actions(local, rng)
        same_step(remote.step(a), local.step(a))
    finally:
        remote.close()


@pytest.mark.parametrize("transport", vray.TRANSPORTS)
def test_workers_spread_over_the_nodes_and_overlap_steps(transport):
    env = vray.VectorEnv(
        "cartpole", num_envs=64, num_workers=2, seed=1, copy=False, transport=transport
    )
    local = GameVectorEnv("cartpole", num_envs=64, seed=1)
    try:
        nodes = {node for node, _ in (vray.ray.get(w.where.remote()) for w in env.workers)}
        assert len(nodes) == 2  # both nodes are this machine: both workers share its memory
        assert all(env._links) == (transport == "shared")
        env.reset(seed=1)
        local.reset(seed=1)
        rng = np.random.default_rng(1)
        a = actions(local, rng)
        env.send(a)  # EnvPool's names; the trainer would run inference here
        with pytest.raises(RuntimeError, match="twice"):
            env.step_async(a)
        same_step(env.recv(), local.step(a))
        env.step_async(a)  # other calls wait for the step in flight; its results are kept
        want = local.step(a)
        assert same(env.get_state(), local.get_state())
        same_step(env.step_wait(), want)
        with pytest.raises(RuntimeError, match="without step_async"):
            env.step_wait()
    finally:
        env.close()


@pytest.mark.parametrize("transport", vray.TRANSPORTS)
def test_bad_actions_raise_before_any_worker_moves(transport):
    env = vray.VectorEnv("cartpole", num_envs=6, num_workers=2, seed=2, transport=transport)
    try:
        env.reset(seed=2)
        before = env.get_state()
        bad = np.zeros(6, dtype=np.int64)
        bad[4] = 2
        for wrong, match in [
            (bad, "env 4 is out of range"),
            (np.zeros(6, dtype=np.float32), "integers"),
            (np.zeros(5, dtype=np.int64), "shape"),
        ]:
            with pytest.raises(ValueError, match=match):
                env.step(wrong)
        assert same(env.get_state(), before)
    finally:
        env.close()


def _kill(env, w):
    """Kill worker ``w``'s process and wait until the system has ended it."""
    _, pid = vray.ray.get(env.workers[w].where.remote())
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] in "ZX":
                    return
        except (FileNotFoundError, ProcessLookupError):  # gone while being read
            return
    raise AssertionError(f"worker process {pid} did not end")


@pytest.mark.parametrize(
    "mode,transport",
    [
        (AutoresetMode.NEXT_STEP, "ray"),
        (AutoresetMode.SAME_STEP, "ray"),
        (AutoresetMode.NEXT_STEP, "shared"),
        (AutoresetMode.SAME_STEP, "shared"),
    ],
)
def test_a_killed_worker_comes_back_with_its_episodes_truncated(mode, transport):
    n = 8
    env = vray.VectorEnv(
        "cartpole", num_envs=n, num_workers=2, seed=3, autoreset_mode=mode, transport=transport
    )
    local = GameVectorEnv("cartpole", num_envs=n, seed=3, autoreset_mode=mode)
    fresh = GameVectorEnv("cartpole", num_envs=n, seed=3, autoreset_mode=mode)
    try:
        env.reset(seed=3)
        local.reset(seed=3)
        rng = np.random.default_rng(2)
        for _ in range(5):
            a = actions(local, rng)
            same_step(env.step(a), local.step(a))
        _kill(env, 1)
        lost = np.arange(n) >= 4
        a = actions(local, rng)
        obs, rewards, terminated, truncated, infos = env.step(a)
        kept = local.step(a)
        assert truncated[lost].all() and not terminated[lost].any()
        assert (rewards[lost] == 0).all()
        for got, want in zip((obs, rewards, terminated, truncated), kept[:4], strict=True):
            assert same(got[~lost], want[~lost])
        # The lost episodes start again from their seeds: as a fresh env's, from here on.
        fresh.reset(seed=3)
        if mode == AutoresetMode.SAME_STEP:
            assert infos["_final_obs"][lost].all()
            assert same(obs[lost], fresh._out(fresh._obs)[lost])
        else:
            a = actions(local, rng)
            obs = env.step(a)[0]
            local.step(a)
            assert same(obs[lost], fresh._out(fresh._obs)[lost])
        for _ in range(10):
            a = actions(local, rng)
            out, ref, new = env.step(a), local.step(a), fresh.step(a)
            assert same(out[0][~lost], ref[0][~lost]) and same(out[0][lost], new[0][lost])
            assert same(out[1][lost], new[1][lost])
    finally:
        env.close()


@pytest.mark.parametrize("transport", vray.TRANSPORTS)
def test_a_killed_worker_in_disabled_mode_stays_frozen_until_reset(transport):
    n = 6
    mode = AutoresetMode.DISABLED
    env = vray.VectorEnv(
        "cartpole", num_envs=n, num_workers=2, seed=3, autoreset_mode=mode, transport=transport
    )
    fresh = GameVectorEnv("cartpole", num_envs=n, seed=3, autoreset_mode=mode)
    try:
        env.reset(seed=3)
        a = np.zeros(n, dtype=np.int64)
        last = env.step(a)[0]
        _kill(env, 0)
        lost = np.arange(n) < 3
        for _ in range(2):
            obs, rewards, _, truncated, _ = env.step(a)
            assert truncated[lost].all() and (rewards[lost] == 0).all()
            assert same(obs[lost], last[lost])
        fresh.reset(seed=3)
        want = fresh.reset(options={"reset_mask": lost})[0]
        obs = env.reset(options={"reset_mask": lost})[0]
        assert same(obs[lost], want[lost])
        assert not env.step(a)[3][lost].any()
    finally:
        env.close()


@pytest.mark.parametrize(
    "dumps,transport",
    [(pickle.dumps, "ray"), (cloudpickle.dumps, "shared"), (pickle.dumps, "shared")],
)
def test_the_distributed_env_pickles_mid_episode(dumps, transport):
    loads = pickle.loads
    env = vray.VectorEnv("cartpole", num_envs=5, num_workers=2, seed=4, transport=transport)
    try:
        env.reset(seed=4)
        rng = np.random.default_rng(3)
        for _ in range(6):
            env.step(actions(env, rng))
        copy = loads(dumps(env))
        try:
            for _ in range(20):
                a = actions(env, rng)
                same_step(copy.step(a), env.step(a))
        finally:
            copy.close()
    finally:
        env.close()


def test_a_worker_on_another_machine_takes_its_steps_by_ray_calls():
    """A worker that finds no shared memory of the driver's (here: a segment it cannot find, as
    on another machine) is not linked; its arrays travel in Ray's messages, bit-identical, beside
    a linked worker's."""
    n = 6
    env = vray.VectorEnv("connectx", num_envs=n, num_workers=2, seed=7)
    local = GameVectorEnv("connectx", num_envs=n, seed=7)
    try:
        name, token, size, fields = env._shared.layout
        elsewhere = (name + "-elsewhere", token, size, fields)
        _, address, _, timeout = env._link_args(1)
        assert vray.ray.get(env.workers[1].link.remote(elsewhere, address, 1, timeout)) is False
        env._drop_link(1)
        assert env._links[0] is not None and env._links[1] is None
        assert same(env.reset(seed=7)[0], local.reset(seed=7)[0])
        rng = np.random.default_rng(7)
        for _ in range(15):
            a = actions(local, rng)
            same_step(env.step(a), local.step(a))
    finally:
        env.close()
    with pytest.raises(ValueError, match="transport"):
        vray.VectorEnv("cartpole", num_envs=2, num_workers=1, transport="carrier pigeon")


def test_a_cluster_too_small_for_the_workers_says_so_at_once():
    # Two nodes of 4 CPUs: three workers of 3 CPUs could never be placed (Ray would keep them
    # pending and the first call would wait out its timeout).
    with pytest.raises(ValueError, match=r"lacks the resources .* num_cpus_per_worker=2\b"):
        vray.VectorEnv("cartpole", num_envs=3, num_workers=3, num_cpus_per_worker=3, timeout=5)
    for bad in (-1, True, "1", float("nan")):
        with pytest.raises(ValueError, match="num_cpus_per_worker"):
            vray.VectorEnv("cartpole", num_envs=2, num_workers=2, num_cpus_per_worker=bad)


def test_fractional_workers_and_a_closed_env_refuses_calls():
    env = vray.VectorEnv("cartpole", num_envs=4, num_workers=2, seed=1, num_cpus_per_worker=0.25)
    local = GameVectorEnv("cartpole", num_envs=4, seed=1)
    assert same(env.reset(seed=1)[0], local.reset(seed=1)[0])
    a = np.array([0, 1, 1, 0])
    same_step(env.step(a), local.step(a))
    env.close()
    for call in (lambda: env.step(a), lambda: env.reset(seed=1), env.get_state):
        with pytest.raises(RuntimeError, match="closed"):
            call()


def test_a_worker_uses_no_deprecated_ray_api():
    import warnings

    @vray.ray.remote
    class Probe:
        def build(self):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                make = dict(kind="game", game="cartpole", num_envs=1, seed=0)
                vray.Worker(make, 0, 0)
            return [str(w.message) for w in caught if "deprecated" in str(w.message).lower()]

    probe = Probe.remote()
    try:
        assert vray.ray.get(probe.build.remote(), timeout=120) == []
    finally:
        vray.ray.kill(probe)


def test_make_vec_with_num_workers():
    env = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=4, num_workers=2, seed=6)
    local = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=4, seed=6)
    try:
        assert isinstance(env, vray.VectorEnv) and env.num_workers == 2
        assert same(env.reset(seed=6)[0], local.reset(seed=6)[0])
        a = np.array([0, 1, 1, 0])
        same_step(env.step(a), local.step(a))
    finally:
        env.close()


def lowest_legal(obs, legal):
    """A batched Python policy: each match's move from its own row."""
    return np.argmax(legal, axis=1).astype(np.int64)


def test_play_on_the_cluster_gives_the_local_results():
    from vecenv import selfplay

    local = selfplay.play("connectx", ("negamax", lowest_legal), 37, seed=8, keep_actions=True)
    done = []
    spread = selfplay.play(
        "connectx",
        ("negamax", lowest_legal),
        37,
        seed=8,
        keep_actions=True,
        cluster=True,
        progress=lambda d, t: done.append((d, t)),
    )
    for key in ("rewards", "statuses", "seats", "plies", "actions"):
        assert same(getattr(spread, key), getattr(local, key)), key
    assert spread.summary == local.summary and done[-1] == (37, 37) and len(done) > 1


def test_tournament_command_on_the_cluster(tmp_path, capsys):
    from tests.test_cli import run
    from vecenv import tournament

    address = vray.ray.get_runtime_context().gcs_address
    page = tmp_path / "t.html"
    code, out, _ = run(
        capsys,
        "tournament", "tictactoe", "--agents", "reaction", "random",
        "tests.test_ray:lowest_legal", "--matches-per-pair", "12", "--ray", address,
        "--html", str(page),
    )  # fmt: skip
    assert code == 0, out
    local = tournament.round_robin(
        "tictactoe", ["reaction", "random", "tests.test_ray:lowest_legal"], 12
    )
    assert str(local) in out
    assert "cross-table" in page.read_text() and "reaction" in page.read_text()


def test_arena_servers_on_the_cluster_share_one_postgres_database(postgres_url):  # noqa: F811
    import functools

    from vecenv.arena import Arena, on_ray

    from .arena.helpers import (
        RPS,
        SHORT_RPS,
        Player,
        assert_rps_runs_and_ratings,
        assert_stored,
        random_moves,
        run_together,
    )

    arena = Arena(postgres_url)
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    configs = [arena.add_agent("rps", f"agent{k}") for k in range(2)]
    with on_ray.serve(postgres_url, servers=2, host="127.0.0.1") as servers:
        assert len(set(servers.urls)) == 2
        players = [
            Player(dict(config, url=url), random_moves(10 * k + s))
            for k, config in enumerate(configs)
            for s, url in enumerate(servers.urls)
        ]
        run_together([functools.partial(player.play, 5) for player in players])
    assert_stored(arena, players)
    assert_rps_runs_and_ratings(arena, 5)
    arena.close()


def test_play_command_on_the_cluster_prints_the_local_summary(capsys):
    from tests.test_cli import run

    address = vray.ray.get_runtime_context().gcs_address
    argv = ["play", "tictactoe", "--agents", "reaction", "random", "--matches", "30"]
    code, spread, _ = run(capsys, *argv, "--ray", address)
    assert code == 0
    code, local, _ = run(capsys, *argv)
    assert code == 0 and spread == local and "30 matches" in local


def match_actions(env, rng):
    """(N, A) moves, legal or not (an illegal one is the rules' to judge, on both sides)."""
    space = env.single_action_space
    return rng.integers(space.start, space.start + space.n, size=(env.num_envs, env.num_agents))


def same_multiagent_step(out, ref):
    same_step(out, ref)
    for key in ("action_mask", "to_play"):
        assert same(out[4][key], ref[4][key]), key


@pytest.mark.parametrize(
    "game,mode,transport",
    [
        ("connectx", AutoresetMode.NEXT_STEP, "shared"),
        ("tictactoe", AutoresetMode.SAME_STEP, "shared"),
        ("connectx", AutoresetMode.DISABLED, "ray"),
    ],
)
def test_multi_agent_matches_as_the_local_env(game, mode, transport):
    from vecenv.gym.multiagent import MultiAgentVectorEnv

    n = 9
    remote = vray.MultiAgentVectorEnv(
        game, num_envs=n, num_workers=2, seed=11, autoreset_mode=mode, transport=transport
    )
    local = MultiAgentVectorEnv(game, num_envs=n, seed=11, autoreset_mode=mode)
    try:
        assert remote.observation_space == local.observation_space
        assert remote.action_space == local.action_space
        assert remote.num_agents == local.num_agents == 2
        obs, infos = remote.reset(seed=11)
        want_obs, want_infos = local.reset(seed=11)
        assert same(obs, want_obs) and same(infos, want_infos)
        rng = np.random.default_rng(11)
        for k in range(30):
            a = match_actions(local, rng)
            same_multiagent_step(remote.step(a), local.step(a))
            assert same(remote.action_mask, local.action_mask)
            assert same(remote.to_play, local.to_play)
            if mode == AutoresetMode.DISABLED and k % 10 == 9:
                opts = {"reset_mask": local.engine.states["done"] != 0}
                got, want = remote.reset(options=opts), local.reset(options=opts)
                assert same(got[0], want[0]) and same(got[1], want[1])
        assert same(remote.flat(remote.step(a)[1]), local.flat(local.step(a)[1]))
        with pytest.raises(ValueError, match="shape"):
            remote.step(a[:, 0])
    finally:
        remote.close()


def test_a_killed_multi_agent_worker_and_a_pickled_multi_agent_env():
    from vecenv.gym.multiagent import MultiAgentVectorEnv

    n = 6
    env = vray.MultiAgentVectorEnv("connectx", num_envs=n, num_workers=2, seed=12)
    local = MultiAgentVectorEnv("connectx", num_envs=n, seed=12)
    fresh = MultiAgentVectorEnv("connectx", num_envs=n, seed=12)
    try:
        env.reset(seed=12)
        local.reset(seed=12)
        rng = np.random.default_rng(12)
        for _ in range(3):
            a = match_actions(local, rng)
            same_multiagent_step(env.step(a), local.step(a))
        copy = pickle.loads(pickle.dumps(env))
        try:
            a = match_actions(local, rng)
            same_multiagent_step(copy.step(a), env.step(a))
        finally:
            copy.close()
        local.step(a)
        _kill(env, 1)
        lost = np.arange(n) >= 3
        a = match_actions(local, rng)
        _, rewards, terminated, truncated, _ = env.step(a)
        local.step(a)
        assert truncated[lost].all() and not terminated[lost].any() and (rewards[lost] == 0).all()
        # Next step: the lost matches start again from their seeds, masks and all.
        fresh.reset(seed=12)
        a = match_actions(local, rng)
        obs, _, _, _, infos = env.step(a)
        kept = local.step(a)
        assert same(obs["board"][lost], fresh._obs["board"][lost])
        assert same(infos["action_mask"][lost], fresh.action_mask[lost])
        assert same(obs["board"][~lost], kept[0]["board"][~lost])
    finally:
        env.close()
