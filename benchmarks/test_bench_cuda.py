"""vecenv on a GPU (``device="cuda"``) against the JAX engines on the same GPU and against vecenv's
own CPU engine on the same machine's cores, measured in one run. Skipped without a CUDA GPU (the
smoke run included: there is nothing to run it on in CI).

- Classic control (CartPole, Acrobot, Pendulum) random rollouts of T = 32 steps, env-steps/s at
  N = 2^12 .. 2^20 (even powers): vecenv's ``CudaEngine.rollout(T)`` (T steps in one launch, the
  random policy drawn on the GPU, every step's observation, action, reward and flags kept);
  vecenv's ``CudaEngine.step`` T times a round (one launch a step, actions already on the GPU:
  one of a few pre-made device rows each step); gymnax's ``jax.jit(vmap(step))`` in a
  ``lax.scan`` of T = 32 steps (``harness.gymnax_round``, every step's observation kept);
  vecenv's CPU engine on every core.
- Per-step stepping with a PyTorch policy (no T-step kernel): a policy's forward pass on the
  engine's observation buffer and its sampled actions stepped where they lie, env-steps/s at
  N = 2^12, 2^16, 2^20; and the host's cost of a step (``test_host_overhead``: ``step`` at a
  small N, a prepared launch alone, numba-cuda's own launch of the same kernel, a
  synchronisation), in microseconds, printed and kept in the benchmark's extra_info.
- Connect Four random self-play, plies/s: vecenv's ``DeviceSeats.step(T)`` (both seats the
  built-in random agent, same-step autoreset, T = 32 plies in one launch); Pgx's
  ``connect_four`` under ``jax.jit(vmap)`` in a ``lax.scan`` with ``auto_reset``
  (``harness.pgx_round``); vecenv's CPU ``Seats.step(T)`` on every core.
- Connect Four search, simulations/s: ``MCTS(..., device="cuda")`` (one thread a tree, random
  playouts, UCT) against the CPU search on every core, N = 2^10 .. 2^14 positions, S = 64.
- The end-to-end hand-off: a PyTorch policy's forward pass on the engine's observation buffer (a
  tensor over the same GPU memory) and its argmax stepped as actions, no host copy; against the
  CPU engine whose observations are copied to the GPU and actions back.
- PPO with the game and the network on the GPU (``vecenv.ppo.device``): env-steps/s of the whole
  training loop, CartPole at N = 4,096. Time to a return (CartPole 475, MinAtar Breakout 28)
  beside PuffeRL takes minutes: ``python benchmarks/gpu_training.py``.

Targets (the issue's): rollouts >= gymnax's scan at N >= 2^16 and >= 0.5x at 2^12 (CartPole,
Acrobot, Pendulum alike); self-play >= 10x Pgx. JAX must run on the GPU in this process: run this
module on its own (``pytest benchmarks/test_bench_cuda.py``) so no other module has started jax on
the CPU first.
"""

import os
import sys

import numba
import numpy as np
import pytest
import report
from cuda_host_overhead import per_call_us
from harness import gymnax_round, pgx_round, timed

import vecenv
from vecenv.cuda import gpu_available
from vecenv.seats import Seats

T = 32  # steps (or plies) a round
EXPONENTS = (12, 14, 16, 18, 20)
TORCH_N = (2**12, 2**16, 2**20)
GAMES = {"cartpole": "CartPole-v1", "acrobot": "Acrobot-v1", "pendulum": "Pendulum-v1"}
SELFPLAY_N = (2**14, 2**18, 2**20)
SEARCH_N = (2**10, 2**12, 2**14)
SEARCH_S = 64
ROUNDS = 5
ACTION_ROWS = 4  # distinct device action rows cycled through a round (memory at N = 2^22)


pytestmark = pytest.mark.skipif(
    not gpu_available(), reason="no CUDA GPU here (GPU figures unmeasured)"
)
CPU_THREADS = numba.config.NUMBA_NUM_THREADS
SECTION = "GPU (CUDA): vecenv's CudaEngine vs the JAX engines on the same GPU and its CPU engine"


def _jax_on_gpu():
    if "jax" not in sys.modules:  # the harness would hold jax to the CPU, for the CPU suites
        os.environ["JAX_PLATFORMS"] = "cuda"
    import jax

    if jax.default_backend() != "gpu":
        pytest.skip("jax runs on the CPU in this process: run benchmarks/test_bench_cuda.py alone")


def _declare():
    for game, gym_id in GAMES.items():
        for e in EXPONENTS:
            key = ("cuda", game, 2**e)
            report.label(key + ("vecenv-cuda",), f"vecenv CUDA rollout({T}) {gym_id} N=2^{e}")
            report.label(key + ("vecenv-cuda-step",), f"vecenv CUDA step x{T} N=2^{e}")
            report.label(key + ("gymnax",), f"gymnax scan T={T} N=2^{e}")
            report.label(key + ("vecenv-cpu",), f"vecenv CPU {CPU_THREADS} threads N=2^{e}")
            title = f"{gym_id} N=2^{e}"
            aim = 1.0 if e >= 16 else 0.5
            report.compare(SECTION, title + " vs gymnax", key + ("vecenv-cuda",), key + ("gymnax",),
                           target=aim, target_text=f"target >= {aim:g}x")  # fmt: skip
            report.compare(SECTION, title + " rollout vs step", key + ("vecenv-cuda",),
                           key + ("vecenv-cuda-step",))  # fmt: skip
            report.compare(
                SECTION, title + " vs CPU", key + ("vecenv-cuda",), key + ("vecenv-cpu",)
            )
    for n in TORCH_N:
        key = ("cuda", "torch-policy", n)
        report.label(key + ("vecenv-cuda",), f"CartPole + torch policy, step a launch, N={n}")
    for n in SELFPLAY_N:
        key = ("cuda", "connect_four", n)
        report.label(key + ("vecenv-cuda",), f"vecenv CUDA random self-play N={n}")
        report.label(key + ("pgx",), f"pgx connect_four scan T={T} N={n}")
        report.label(key + ("vecenv-cpu",), f"vecenv CPU Seats.step, {CPU_THREADS} threads")
        title = f"Connect Four random self-play N={n}"
        report.compare(SECTION, title + " vs Pgx", key + ("vecenv-cuda",), key + ("pgx",),
                       target=10.0, target_text="target >= 10x")  # fmt: skip
        report.compare(SECTION, title + " vs CPU", key + ("vecenv-cuda",), key + ("vecenv-cpu",))
    for n in SEARCH_N:
        key = ("cuda", "search", n)
        report.label(key + ("vecenv-cuda",), f"vecenv CUDA search N={n} S={SEARCH_S}")
        report.label(key + ("vecenv-cpu",), f"vecenv CPU search, {CPU_THREADS} threads")
        title = f"Connect Four search N={n}"
        report.compare(SECTION, title + " vs CPU", key + ("vecenv-cuda",), key + ("vecenv-cpu",))
    for n in (2**16, 2**20):
        key = ("cuda", "torch-handoff", n)
        report.label(key + ("zero-copy",), f"CartPole + torch policy on GPU obs, N={n}")
        report.label(key + ("host-copies",), f"CPU engine, obs to GPU and actions back, N={n}")
        report.compare(SECTION, f"PyTorch hand-off N={n}", key + ("zero-copy",),
                       key + ("host-copies",))  # fmt: skip


_declare()


def _action_rows(engine, rows, seed=0):
    rng = np.random.default_rng(seed)
    n = engine.num_envs
    low, high = engine.action.low, engine.action.high
    if engine.action.discrete:
        return [rng.integers(low[0], high[0] + 1, size=(n, 1)) for _ in range(rows)]
    return [rng.uniform(low[0], high[0], size=(n, 1)) for _ in range(rows)]


def _rollout_round(game, n):
    from numba import cuda

    engine = vecenv.make(game, n, seed=0, device="cuda")

    def round_fn():
        engine.rollout(T)
        cuda.synchronize()

    round_fn()  # compiles the kernel
    return round_fn


def _cuda_round(game, n):
    from numba import cuda

    engine = vecenv.make(game, n, seed=0, device="cuda")
    rows = [cuda.to_device(a) for a in _action_rows(engine, ACTION_ROWS)]

    def round_fn():
        for t in range(T):
            engine.step(rows[t % ACTION_ROWS])
        cuda.synchronize()

    round_fn()  # compiles the kernels
    return round_fn


def _cpu_round(game, n):
    engine = vecenv.make(game, n, seed=0, num_threads=CPU_THREADS)
    rows = _action_rows(engine, ACTION_ROWS)

    def round_fn():
        for t in range(T):
            engine.step(rows[t % ACTION_ROWS])

    round_fn()
    return round_fn


@pytest.mark.parametrize("impl", ["vecenv-cuda", "vecenv-cuda-step", "gymnax", "vecenv-cpu"])
@pytest.mark.parametrize("exponent", EXPONENTS)
@pytest.mark.parametrize("game", list(GAMES))
def test_classic_control(benchmark, game, exponent, impl):
    n = 2**exponent
    benchmark.group = f"CUDA {GAMES[game]} N=2^{exponent}"
    if impl == "vecenv-cuda":
        round_fn = _rollout_round(game, n)
    elif impl == "vecenv-cuda-step":
        round_fn = _cuda_round(game, n)
    elif impl == "vecenv-cpu":
        round_fn = _cpu_round(game, n)
    else:
        _jax_on_gpu()
        rows = [a[:, 0] for a in _action_rows(vecenv.make(game, n), T)]
        round_fn, _ = gymnax_round(GAMES[game], "gymnax-scan", rows, T)
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", game, n, impl), T, n, impl=impl)


def _selfplay_cuda(n):
    from numba import cuda

    from vecenv.cuda.selfplay import DeviceSeats

    engine = vecenv.make("connectx", n, seed=0, autoreset="same_step", device="cuda")
    seats = DeviceSeats(engine)
    seats.assign("random", np.zeros(n, dtype=np.int64))
    seats.assign("random", np.ones(n, dtype=np.int64))

    def round_fn():
        seats.step(T)
        cuda.synchronize()

    round_fn()
    return round_fn


def _selfplay_cpu(n):
    engine = vecenv.make("connectx", n, seed=0, autoreset="same_step", num_threads=CPU_THREADS,
                         parallel=True)  # fmt: skip
    seats = Seats(engine)
    seats.assign("random", np.zeros(n, dtype=np.int64))
    seats.assign("random", np.ones(n, dtype=np.int64))

    def round_fn():
        seats.step(T)

    round_fn()
    return round_fn


@pytest.mark.parametrize("impl", ["vecenv-cuda", "pgx", "vecenv-cpu"])
@pytest.mark.parametrize("n", SELFPLAY_N)
def test_random_selfplay(benchmark, n, impl):
    benchmark.group = f"CUDA Connect Four random self-play N={n}"
    if impl == "vecenv-cuda":
        round_fn = _selfplay_cuda(n)
    elif impl == "vecenv-cpu":
        round_fn = _selfplay_cpu(n)
    else:
        _jax_on_gpu()
        round_fn, _ = pgx_round(n, T)
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", "connect_four", n, impl), T, n, unit="plies", impl=impl)


@pytest.mark.parametrize("impl", ["vecenv-cuda", "vecenv-cpu"])
@pytest.mark.parametrize("n", SEARCH_N)
def test_search(benchmark, n, impl):
    from vecenv.search import MCTS

    benchmark.group = f"CUDA Connect Four search N={n}"
    engine = vecenv.make("connectx", n, seed=0, autoreset="disabled")
    table = Seats(engine)
    table.assign("random", np.zeros(n, dtype=np.int64))
    table.assign("random", np.ones(n, dtype=np.int64))
    table.step(4)  # positions four plies in
    states = engine.get_state()
    device = "cuda" if impl == "vecenv-cuda" else "cpu"
    threads = {} if device == "cuda" else {"num_threads": CPU_THREADS}
    searcher = MCTS("connectx", SEARCH_S, device=device, **threads)

    def round_fn():
        searcher.search(states, seed=1)

    round_fn()
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", "search", n, impl), SEARCH_S, n, unit="simulations",
                  impl=impl)  # fmt: skip


@pytest.mark.parametrize("impl", ["zero-copy", "host-copies"])
@pytest.mark.parametrize("n", [2**16, 2**20])
def test_torch_handoff(benchmark, n, impl):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    from numba import cuda

    benchmark.group = f"CUDA PyTorch hand-off N={n}"
    policy = torch.nn.Sequential(
        torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 2)
    ).cuda()
    if impl == "zero-copy":
        engine = vecenv.make("cartpole", n, seed=0, device="cuda")
        obs = torch.as_tensor(engine.obs["obs"], device="cuda").view(n, 4)  # the engine's buffer

        def round_fn():
            with torch.no_grad():
                for _ in range(T):
                    engine.step(policy(obs).argmax(-1).view(n, 1))
            cuda.synchronize()

    else:
        engine = vecenv.make("cartpole", n, seed=0, num_threads=CPU_THREADS)

        def round_fn():
            with torch.no_grad():
                for _ in range(T):
                    obs = torch.from_numpy(engine.obs["obs"].reshape(n, 4)).cuda()
                    engine.step(policy(obs).argmax(-1).view(n, 1).cpu().numpy())

    round_fn()
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", "torch-handoff", n, impl), T, n, impl=impl)


def _torch_policy(torch, n):
    return torch.nn.Sequential(
        torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 2)
    ).cuda()


@pytest.mark.parametrize("n", TORCH_N)
def test_torch_policy_steps(benchmark, n):
    """Per-step stepping with a PyTorch policy (no T-step kernel): the policy's forward pass on
    the engine's observations, a sampled action per episode, ``step`` on the CUDA tensor."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    benchmark.group = f"CUDA torch policy N={n}"
    policy = _torch_policy(torch, n)
    engine = vecenv.make("cartpole", n, seed=0, device="cuda")
    obs = torch.as_tensor(engine.obs["obs"], device="cuda").view(n, 4)  # the engine's buffer

    def round_fn():
        with torch.no_grad():
            for _ in range(T):
                logits = policy(obs)
                engine.step(torch.multinomial(logits.softmax(-1), 1))
        torch.cuda.synchronize()

    round_fn()
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", "torch-policy", n, "vecenv-cuda"), T, n)


def test_host_overhead(benchmark):
    """The host's cost of a step, in microseconds (best of 5 rounds): ``step`` with device
    actions at N = 256 (launch, wait and the read of the refusal word: the GPU's own time is a
    few microseconds there), the prepared launch alone (queued, not waited for), numba-cuda's own
    launch of the same kernel with the same arguments (queued), a synchronisation with nothing
    queued, and a PyTorch policy's forward pass with its sampling (queued)."""
    from numba import cuda

    from vecenv.cuda import launch

    n, calls = 256, 2000
    engine = vecenv.make("cartpole", n, seed=0, device="cuda")
    actions = cuda.to_device(np.zeros((n, 1), dtype=np.int64))
    engine.step(actions)
    run = engine._launches["step"]
    figures = {
        "step_us": per_call_us(lambda: engine.step(actions), calls),
        "prepared_launch_us": per_call_us(run, calls),
    }
    cuda.synchronize()
    kernel = run.dispatcher[run.grid, run.block]
    figures["numba_launch_us"] = per_call_us(lambda: kernel(*run.args), calls)
    cuda.synchronize()
    figures["synchronize_us"] = per_call_us(launch.synchronize, calls)
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        policy = _torch_policy(torch, n)
        obs = torch.as_tensor(engine.obs["obs"], device="cuda").view(n, 4)

        def forward():
            with torch.no_grad():
                torch.multinomial(policy(obs).softmax(-1), 1)

        figures["torch_policy_us"] = per_call_us(forward, calls)
        torch.cuda.synchronize()
    print({k: round(v, 2) for k, v in figures.items()})
    benchmark.group = "CUDA host overhead"
    benchmark.pedantic(lambda: engine.step(actions), rounds=1, iterations=1)
    report.record_extra(("cuda", "host-overhead"), benchmark, **figures)


def test_device_training_throughput(benchmark):
    """PPO with the game and the network on the GPU: env-steps/s of the whole loop (rollouts in
    one launch each, PyTorch's update on the GPU), CartPole at N = 4,096, 32 steps a rollout."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    from vecenv.ppo import PPOConfig, device

    n = 4096
    config = PPOConfig(num_envs=n, num_steps=32, total_steps=n * 32 * 10, update_epochs=4,
                       num_minibatches=4)  # fmt: skip
    device.train("cartpole", PPOConfig(num_envs=n, num_steps=32, total_steps=n * 32))  # warm
    runs = []
    benchmark.group = "CUDA PPO training"
    benchmark.pedantic(lambda: runs.append(device.train("cartpole", config)[0]), rounds=1,
                       iterations=1)  # fmt: skip
    run = runs[-1]
    print(f"PPO on the GPU, CartPole N={n}: {run.steps_per_second:,.0f} env-steps/s, "
          f"{run.env_fraction:.1%} in the rollouts")  # fmt: skip
    report.record_extra(
        ("cuda", "ppo-training"), benchmark, steps_per_second=run.steps_per_second,
        env_fraction=run.env_fraction,
    )  # fmt: skip
