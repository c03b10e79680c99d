"""vecenv on Ray: the distributed VectorEnv against the local engine, and where a step's time goes

**Overhead.** Env-steps per second of ``vecenv.ray.VectorEnv(game, N, num_workers=2)`` (two Ray
actors on this machine, one engine thread each, ``copy=False``; its default transport, impl
"ray-W2": the steps through shared memory, a byte on a socket waking each worker) against the
local ``GameVectorEnv(game, N, num_threads=2, copy=False)``, CartPole and ConnectX (against its
built-in random opponent), N = 4096 and 65536, the same random actions on both sides, drawn once;
and the same with ``transport="ray"`` (impl "ray-calls-W2": every step a Ray call to each worker,
the arrays in the messages, as between machines). Target: the Ray env at least 0.7x the local
engine at N = 65536.

**Self-play** (``test_ray_multi_agent_overhead``): ``vecenv.ray.MultiAgentVectorEnv("connectx",
N, num_workers=2)`` (both seats' observations, rewards, flags and move masks) against the local
``MultiAgentVectorEnv`` with 2 threads, N = 65536, rounds alternating as above.

**Scaling model** (``test_ray_cost_split``, CartPole, N = 65536, 2 workers, ``transport="ray"``:
what a step costs when the workers are other machines): a step's time split
into compute (a worker's engine step over its slice, timed alone), serialisation (pickling and
unpickling a worker's actions, sent as the smallest integers that hold them, and results, as Ray
does) and transport (the rest of the measured
Ray step), the bytes crossing the network per env-step, and from those figures the projected
throughput of 8 and 64 nodes with the same episodes per node (the driver gathers every node's
results, so its serialisation and transport grow with the nodes while compute stays per node).

Ray starts a one-node cluster in this process (4 CPUs to its count, on the machine's 2). In smoke
mode (``--benchmark-disable``) N = 64 and one round each. Ray is an optional peer: without it these
benchmarks skip.

**Against RLlib's env runners** (where ``ray.rllib`` imports: it needs ``ray[rllib]``, whose
pins move gymnasium, so it is no part of the test extra): env-steps per second of two remote
``SingleAgentEnvRunner`` actors sampling CartPole-v1 (gymnasium's vector env, 64 envs per runner,
random actions, ``sample(num_timesteps=20000)`` each, in parallel) against
``vecenv.ray.VectorEnv("CartPole-v1", 4096, num_workers=2)`` stepped with random actions, on the
same one-node Ray. Target: at least 10x.

Keys: ("ray", game, N, impl) with impl "local-T2", "ray-W2" and "ray-calls-W2"; ("ray", "rllib",
impl) with impl "rllib-W2" and "vecenv-W2".
"""

import pickle
import time

import numpy as np
import pytest
import report
from harness import timed

from tests.raycluster import one_ray_at_a_time
from vecenv.gym.vector import GameVectorEnv

ray = pytest.importorskip("ray")
import vecenv.ray as vray  # noqa: E402

GAMES = ["cartpole", "connectx"]
SIZES = [4096, 65536]
STEPS = 10  # steps a round
ROUNDS = 15

for _game in GAMES:
    for _n in SIZES:
        for _side, _label in (("ray-W2", ""), ("ray-calls-W2", "transport='ray', ")):
            report.compare(
                "Ray",
                f"{_game} N={_n}: vecenv.ray {_label}2 workers vs local engine 2 threads",
                ("ray", _game, _n, _side),
                ("ray", _game, _n, "local-T2"),
                target=0.7 if _n == 65536 else None,
                target_text=">= 0.7x" if _n == 65536 else "",
            )


report.compare(
    "Ray",
    "ConnectX self-play N=65536: vecenv.ray.MultiAgentVectorEnv 2 workers vs local 2 threads",
    ("ray", "connectx-selfplay", 65536, "ray-W2"),
    ("ray", "connectx-selfplay", 65536, "local-T2"),
)
report.compare(
    "Ray",
    "CartPole: vecenv.ray 2 workers (N=4096) vs RLlib's 2 env runners (64 envs each)",
    ("ray", "rllib", "vecenv-W2"),
    ("ray", "rllib", "rllib-W2"),
    target=10.0,
    target_text=">= 10x",
)


@pytest.fixture(scope="module")
def local_ray():
    with one_ray_at_a_time():
        started = not ray.is_initialized()
        if started:
            # A new local instance of its own ("local"), never a cluster an earlier test or
            # another process left behind (ray.init would join the one Ray last recorded as
            # current). Four CPUs to Ray's count on two real ones: the overhead benchmark keeps
            # two envs of two workers alive (one steps at a time, the other's workers sleep).
            ray.init(
                address="local", num_cpus=4, object_store_memory=200 * 2**20, log_to_driver=False
            )
        yield ray
        if started:
            ray.shutdown()


def _actions(env, n, rounds):
    rng = np.random.default_rng(0)
    space = env.single_action_space
    return [rng.integers(space.start, space.start + space.n, size=n) for _ in range(rounds)]


def _round(env, moves):
    def play():
        for a in moves:
            env.step(a)

    return play


def _alternate(benchmark, ours, others, key_of, calls, n):
    """Time the round ``ours`` with pytest-benchmark, each round after one round of each of
    ``others`` (impl -> round), timed by hand, so that every side sees the same spells of a shared
    machine; each other side is recorded under ``key_of(impl)`` (its best round). In smoke mode
    every round runs once."""
    times = {impl: [] for impl in others}

    def setup():  # untimed by pytest-benchmark
        for impl, round_fn in others.items():
            start = time.perf_counter()
            round_fn()
            times[impl].append(time.perf_counter() - start)

    setup()  # a warm-up
    if benchmark.disabled:
        benchmark(ours)
        return
    ours()
    for spent in times.values():
        spent.clear()
    benchmark.pedantic(ours, setup=setup, rounds=ROUNDS, iterations=1)
    for impl, spent in times.items():
        benchmark.extra_info[impl] = report.record_rounds(key_of(impl), spent, calls, n)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("game", GAMES)
def test_ray_overhead(benchmark, local_ray, game, n):
    """The three sides' rounds alternate (local, Ray calls, then the timed shared-memory round),
    so all see the same spells of a shared machine; the figures are each side's best round."""
    benchmark.group = f"Ray {game} N={n}"
    smoke = benchmark.disabled
    if smoke and n != SIZES[0]:
        # Smoke mode steps N = 64 whatever the size: the second size would repeat the first.
        pytest.skip("smoke mode runs the first size (N = 64 either way)")
    n = 64 if smoke else n
    envs = {
        "local-T2": GameVectorEnv(game, num_envs=n, seed=0, num_threads=2, copy=False),
        "ray-calls-W2": vray.VectorEnv(
            game, num_envs=n, num_workers=2, seed=0, copy=False, transport="ray"
        ),
        "ray-W2": vray.VectorEnv(game, num_envs=n, num_workers=2, seed=0, copy=False),
    }
    try:
        for env in envs.values():
            env.reset(seed=0)
        moves = _actions(envs["local-T2"], n, 1 if smoke else STEPS)
        rounds = {impl: _round(env, moves) for impl, env in envs.items()}
        ours = rounds.pop("ray-W2")
        _alternate(benchmark, ours, rounds, lambda impl: ("ray", game, n, impl), len(moves), n)
        report.record(benchmark, ("ray", game, n, "ray-W2"), len(moves), n)
    finally:
        for env in envs.values():
            env.close()


def test_ray_multi_agent_overhead(benchmark, local_ray):
    from vecenv.gym.multiagent import MultiAgentVectorEnv

    benchmark.group = "Ray connectx self-play"
    smoke = benchmark.disabled
    n = 64 if smoke else 65536
    local = MultiAgentVectorEnv("connectx", num_envs=n, seed=0, num_threads=2, copy=False)
    remote = vray.MultiAgentVectorEnv("connectx", num_envs=n, num_workers=2, seed=0, copy=False)
    try:
        local.reset(seed=0)
        remote.reset(seed=0)
        rng = np.random.default_rng(0)
        moves = [rng.integers(0, 7, size=(n, 2)) for _ in range(1 if smoke else STEPS)]
        ours, others = _round(remote, moves), {"local-T2": _round(local, moves)}
        key = ("ray", "connectx-selfplay", n)
        _alternate(benchmark, ours, others, lambda impl: (*key, impl), len(moves), n)
        report.record(benchmark, (*key, "ray-W2"), len(moves), n)
    finally:
        remote.close()


def _best(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_ray_cost_split(benchmark, local_ray):
    smoke = benchmark.disabled
    n, workers = (64, 2) if smoke else (65536, 2)
    repeats = 1 if smoke else 20
    part = n // workers
    remote = vray.VectorEnv(
        "cartpole", num_envs=n, num_workers=workers, seed=0, copy=False, transport="ray"
    )
    alone = GameVectorEnv("cartpole", num_envs=part, seed=0, num_threads=1, copy=False)
    try:
        remote.reset(seed=0)
        alone.reset(seed=0)
        a = np.zeros(n, dtype=np.int64)
        a_part = a[:part].astype(np.int8)  # what the Ray env sends: the smallest integers
        remote.step(a)
        total = _best(lambda: remote.step(a), repeats)
        compute = _best(lambda: alone.step(a[:part]), repeats)
        result = alone.step(a[:part])

        def serialise():
            pickle.loads(pickle.dumps(a_part, protocol=5))
            pickle.loads(pickle.dumps(result, protocol=5))

        # Every worker's share passes through the driver, one after the other.
        serialisation = workers * _best(serialise, repeats)
        transport = max(total - compute - serialisation, 0.0)
        sent = len(pickle.dumps(a_part, protocol=5)) + len(pickle.dumps(result, protocol=5))
        bytes_per_step = sent / part
        per_node = {}
        for nodes in (8, 64):
            # Weak scaling: each node steps ``part`` episodes in parallel; the driver serialises
            # and receives every node's share.
            t = compute + nodes * (serialisation / workers) + nodes * (transport / workers)
            per_node[nodes] = nodes * part / t
        info = {
            "num_envs": n,
            "workers": workers,
            "step_ms": total * 1e3,
            "compute_ms": compute * 1e3,
            "serialisation_ms": serialisation * 1e3,
            "transport_ms": transport * 1e3,
            "bytes_per_env_step": bytes_per_step,
            "measured_env_steps_per_s": n / total,
            "projected_env_steps_per_s_8_nodes": per_node[8],
            "projected_env_steps_per_s_64_nodes": per_node[64],
        }
        benchmark.extra_info.update(info)
        benchmark(lambda: None)
        report.record_extra(("ray", "cost-split"), benchmark, **info)
        print("\nRay cost split: " + ", ".join(f"{k} {v:.4g}" for k, v in info.items()))
        assert total > 0 and bytes_per_step > 0
    finally:
        remote.close()


RLLIB_STEPS = 20000  # env-steps each runner samples a round


@pytest.mark.parametrize("impl", ["rllib-W2", "vecenv-W2"])
def test_against_rllib_env_runners(benchmark, local_ray, impl):
    smoke = benchmark.disabled
    if impl == "rllib-W2":
        try:
            from ray.rllib.algorithms.ppo import PPOConfig
            from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
        except ImportError as exc:
            pytest.skip(f"RLlib does not import ({exc}): pip install 'ray[rllib]'")
        config = (
            PPOConfig()
            .environment("CartPole-v1")
            .env_runners(num_env_runners=0, num_envs_per_env_runner=64)
        )
        runner = ray.remote(num_cpus=1)(SingleAgentEnvRunner)
        runners = [runner.remote(config=config) for _ in range(2)]
        steps = 200 if smoke else RLLIB_STEPS

        def sample():
            ray.get([r.sample.remote(num_timesteps=steps, random_actions=True) for r in runners])

        sample()
        timed(benchmark, sample, 1 if smoke else 3)
        report.record(benchmark, ("ray", "rllib", impl), 1, 2 * steps)
        for r in runners:
            ray.kill(r)
        return
    n = 64 if smoke else 4096
    env = vray.VectorEnv("CartPole-v1", num_envs=n, num_workers=2, seed=0, copy=False)
    try:
        env.reset(seed=0)
        moves = _actions(env, n, 1 if smoke else STEPS)
        timed(benchmark, _round(env, moves), 1 if smoke else ROUNDS)
        report.record(benchmark, ("ray", "rllib", impl), len(moves), n)
    finally:
        env.close()
